/**
 * Where a Mastra message's bytes go on SQLite (docs/PERFORMANCE.md, "Mastra memory storages"): the messages of
 * bench/mastra.ts (one thread, ~290 bytes of text each, saved two at a time) saved through our storage and through
 * `@mastra/libsql`, each on a file of its own; then every table and index of each file with its bytes on disk
 * (`dbstat`, the WAL checkpointed into the file once the storage is closed, read by a process of its own:
 * bench/sqlite-pages.ts), minus its bytes with no message saved,
 * per message; and, for ours, the payload of each column of the message rows. Env: MASTRA_BYTES_MESSAGES (a list,
 * default 1000,10000: each count a run of its own, and the marginal bytes a message between two).
 * Run: npm run bench:script bench/mastra-bytes.ts (Node >= 22.13)
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MastraCompositeStore, MemoryStorage } from "@mastra/core/storage";
import { LibSQLStore } from "@mastra/libsql";
import { mastraStorage } from "../src/mastra/index.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { rng } from "./data.js";
import { benchTurn, saveBenchThread } from "./mastra-data.js";
import { sqlitePages } from "./sqlite-pages.js";
import { fmtNum, mdTable } from "./stats.js";

const COUNTS = (process.env.MASTRA_BYTES_MESSAGES ?? "1000,10000").split(",").map(Number);

type Pages = Map<string, number>;

// Saves `count` messages of one thread as bench/mastra.ts does; answers the pages before and after.
async function fill(storage: MastraCompositeStore, file: string, count: number, close: () => Promise<void>) {
  await storage.init();
  const memory = (await storage.getStore("memory")) as MemoryStorage;
  const threadId = randomUUID();
  await saveBenchThread(memory, threadId);
  const next = rng(7);
  for (let i = 0; i < count; i += 2) {
    const turn = benchTurn(next, threadId, i);
    await memory.saveMessages({ messages: turn });
  }
  await close();
  return sqlitePages(file).tables;
}

async function ours(dir: string, count: number): Promise<{ empty: Pages; full: Pages; columns: string }> {
  const blank = join(dir, `ours-empty-${count}.db`);
  await new SqliteStore(blank).close();
  const file = join(dir, `ours-${count}.db`);
  const store = new SqliteStore(file);
  const full = await fill(mastraStorage(store), file, count, () => store.close());
  const db = new (loadBetterSqlite3())(file, { readonly: true });
  try {
    const cols = db.prepare("SELECT name FROM pragma_table_info('agent_messages')").all() as {
      name: string;
    }[];
    const sums = cols.map((c) => `coalesce(sum(length(${c.name})), 0) AS "${c.name}"`).join(", ");
    const row = db.prepare(`SELECT ${sums} FROM agent_messages`).get() as Record<string, number>;
    const columns = Object.entries(row)
      .map(([c, n]) => `${c} ${fmtNum(n / count)}`)
      .join(", ");
    return { empty: sqlitePages(blank).tables, full, columns };
  } finally {
    db.close();
  }
}

async function libsql(dir: string, count: number): Promise<{ empty: Pages; full: Pages }> {
  const blank = join(dir, `libsql-empty-${count}.db`);
  const b = new LibSQLStore({ id: "e", url: `file:${blank}` });
  await b.init();
  await b.close();
  const file = join(dir, `libsql-${count}.db`);
  const store = new LibSQLStore({ id: "l", url: `file:${file}` });
  const full = await fill(store, file, count, () => store.close());
  return { empty: sqlitePages(blank).tables, full };
}

const grown = (empty: Pages, full: Pages) =>
  new Map([...full].map(([name, bytes]) => [name, bytes - (empty.get(name) ?? 0)] as const));
const sum = (m: Map<string, number>) => [...m.values()].reduce((s, n) => s + n, 0);

const dir = mkdtempSync(join(tmpdir(), "mastra-bytes-"));
try {
  const runs: { count: number; ours: Map<string, number>; libsql: Map<string, number> }[] = [];
  for (const count of COUNTS) {
    const o = await ours(dir, count);
    const l = await libsql(dir, count);
    runs.push({ count, ours: grown(o.empty, o.full), libsql: grown(l.empty, l.full) });
    console.log(
      `## ${fmtNum(count)} messages\n\nOur message rows' column payloads, bytes a message: ${o.columns}\n`,
    );
  }
  for (const side of ["ours", "libsql"] as const) {
    const names = [...new Set(runs.flatMap((r) => [...r[side].keys()]))].filter((n) =>
      runs.some((r) => (r[side].get(n) ?? 0) !== 0),
    );
    names.sort((a, b) => (runs.at(-1)![side].get(b) ?? 0) - (runs.at(-1)![side].get(a) ?? 0));
    const perMessage = (r: (typeof runs)[number], n: string) =>
      fmtNum(Math.round((r[side].get(n) ?? 0) / r.count));
    const marginal = (n: string) => {
      if (runs.length < 2) return "";
      const [a, b] = [runs.at(-2)!, runs.at(-1)!];
      return fmtNum(Math.round(((b[side].get(n) ?? 0) - (a[side].get(n) ?? 0)) / (b.count - a.count)));
    };
    const rows = names.map((n) => [n, ...runs.map((r) => perMessage(r, n)), marginal(n)]);
    const totals = runs.map((r) => fmtNum(Math.round(sum(r[side]) / r.count)));
    const [a, b] = [runs.at(-2), runs.at(-1)!];
    rows.push([
      "**all**",
      ...totals,
      a ? fmtNum(Math.round((sum(b[side]) - sum(a[side])) / (b.count - a.count))) : "",
    ]);
    console.log(`## ${side === "ours" ? "agent-session" : "@mastra/libsql"}: bytes a message\n`);
    console.log(
      mdTable(["table or index", ...runs.map((r) => `at ${fmtNum(r.count)}`), "marginal"], rows),
      "\n",
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
