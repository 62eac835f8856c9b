// The keyless contract (agent-session/testing, runKeylessContract) on SQLite files, on both drivers and the sql
// tag: a store without alice's key refuses every write and search of hers, nothing reaches the file in clear
// (docs/PRIVACY.md, "Refusals").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { SqliteOptions } from "../../src/sql/engines/sqlite/open.js";
import { SQLITE_OWNER_DATA } from "../../src/sql/owner-data/sqlite.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { runKeylessContract } from "../../src/testing/index.js";
import { occurrences } from "../helpers/encryption.js";
import { sqliteRace } from "../helpers/key-race.js";
import { sqliteFiles } from "../helpers/purge.js";
import { sqliteRowsHolding } from "../helpers/rows-holding.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-keyless-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

// node:sqlite needs Node.js >= 22.13 (test/node-sqlite.test.ts); the sql tag is a Durable Object's, over one file.
const nodeSqlite =
  Number(process.versions.node.split(".")[0]) >= 23 || /^22\.(1[3-9]|[2-9]\d)/.test(process.versions.node);
const DRIVERS: [string, (path: string, options: SqliteOptions) => SqliteStore][] = [
  ["better-sqlite3", (path, options) => new SqliteStore(path, options)],
  ["node:sqlite", (path, options) => new SqliteStore(path, { ...options, driver: "node:sqlite" })],
  ["sql tag", (path, options) => new SqliteStore(sqlTagAgent(path), options)],
];

for (const [name, open] of DRIVERS) {
  if (name === "node:sqlite" && !nodeSqlite) {
    console.log(
      `Skipping the keyless contract on node:sqlite: needs Node.js >= 22.13 (running ${process.version})`,
    );
    continue;
  }
  runKeylessContract(
    { describe, it },
    {
      name: `SQLite (${name})`,
      declaration: SQLITE_OWNER_DATA,
      create: async () => {
        const path = join(dir, `store-${n++}.db`);
        return {
          open: async (keyring) => open(path, { changeLog: true, ...(keyring ? { keyring } : {}) }),
          race: async (keyring, owner) =>
            sqliteRace(open(path, { changeLog: true }), open(path, { changeLog: true, keyring }), owner),
          traces: async (text) => occurrences(sqliteFiles(path), text),
          rowsHolding: sqliteRowsHolding(path),
          close: async () => undefined,
        };
      },
    },
  );
}
