// Every backend, built with explicit query limits, for the red-team probes. Postgres runs when the server answers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { SessionMessage } from "../../src/contract/message.js";
import type { SessionStore } from "../../src/contract/store.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/index.js";
import type { QueryLimits } from "../../src/search/limits.js";
import { loadBetterSqlite3 } from "../../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";

type Limits = Partial<QueryLimits>;

/** Entries to store before probing: label, key, content. */
export type ProbeEntry = [label: string, key: string, content: string];

/**
 * A backend: `open` stores `messages` in session "s" (and `entries`, where the store holds entries) and returns
 * a store to search; `close` disposes of everything it opened.
 */
export interface ProbeBackend {
  name: string;
  open(limits: Limits, messages: SessionMessage[], entries?: ProbeEntry[]): Promise<Store>;
  close(): Promise<void>;
}

async function fill(store: Store, messages: SessionMessage[], entries: ProbeEntry[] = []): Promise<void> {
  for (const message of messages) await store.session("s").appendMessage(message);
  for (const [label, key, content] of entries) await store.entries?.setEntry(label, key, content);
}

type Store = SessionStore & Partial<ContextCapableStore>;

function simple(name: string, make: (limits: Limits) => Store): ProbeBackend {
  const stores: Store[] = [];
  return {
    name,
    async open(limits, messages, entries) {
      const store = make(limits);
      stores.push(store);
      await fill(store, messages, entries);
      return store;
    },
    async close() {
      for (const store of stores) await store.close();
    },
  };
}

// A read-only connection matches the rows the writer has not indexed yet in memory, with the same parsed query.
function readonlySqlite(): ProbeBackend {
  const dir = mkdtempSync(join(tmpdir(), "as-probe-"));
  const cleanup: (() => unknown)[] = [];
  return {
    name: "sqlite read-only (pending rows matched in memory)",
    async open(limits, messages, entries) {
      const path = join(dir, `${cleanup.length}.db`);
      const writer = new SqliteStore(path);
      await fill(writer, messages, entries);
      const Database = loadBetterSqlite3();
      const handle = new Database(path, { readonly: true });
      const reader = new SqliteStore(handle, { queryLimits: limits });
      cleanup.push(
        () => handle.close(),
        () => reader.close(),
        () => writer.close(),
      );
      return reader;
    },
    async close() {
      for (const step of cleanup.reverse()) await step();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pglite(): ProbeBackend {
  let db: PGlite | undefined;
  // A schema per open: two opens within one millisecond must not share one (Date.now() could).
  let opened = 0;
  return {
    name: "postgres (PGlite)",
    async open(limits, messages, entries) {
      db ??= await newPGlite();
      const store = new PostgresStore(db, { schema: `probe_${++opened}`, queryLimits: limits });
      await fill(store, messages, entries);
      return store;
    },
    async close() {
      await db?.close();
    },
  };
}

async function postgres(): Promise<ProbeBackend | null> {
  if (await postgresUnavailable()) return null;
  const pool = testPool(2);
  const schemas: string[] = [];
  return {
    name: "postgres (pg)",
    async open(limits, messages, entries) {
      const schema = `agent_session_probe_${process.pid}_${schemas.length}`;
      schemas.push(schema);
      await dropSchema(pool, schema);
      const store = new PostgresStore(pool, { schema, queryLimits: limits });
      await fill(store, messages, entries);
      return store;
    },
    async close() {
      for (const schema of schemas) await dropSchema(pool, schema);
      await pool.end();
    },
  };
}

/** Fresh backends for one test: memory, SQLite (:memory:, sql tag, read-only), PGlite and, when up, Postgres. */
export async function probeBackends(): Promise<ProbeBackend[]> {
  const backends = [
    simple("memory", (limits) => new MemoryStore({ queryLimits: limits })),
    simple("sqlite :memory:", (limits) => new SqliteStore(":memory:", { queryLimits: limits })),
    simple("sql tag", (limits) => new SqliteStore(sqlTagAgent(), { queryLimits: limits })),
    readonlySqlite(),
    ...(pgliteSwitchedOff() ? [] : [pglite()]),
  ];
  const pg = await postgres();
  return pg ? [...backends, pg] : backends;
}
