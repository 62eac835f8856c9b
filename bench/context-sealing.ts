// Sealed search entries against clear (docs/PRIVACY.md, "Context blocks and search entries"): an owner with a key in
// a store with a keyring (sealed: the entry sealed, indexed as the owner's blind tokens, a search's terms hashed)
// beside the same owner in a store without one (clear), written and searched interleaved so the machine's load falls
// on both alike. `setEntry` p50 of ~60-character entries and `searchEntries` p50 of two-word searches of the label's
// entries, on a SQLite file and the Postgres server. Part of `BENCH_ONLY=encryption`; standalone:
// `npx tsx bench/context-sealing.ts` (BENCH_SCALE shrinks the counts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { ContextCapableStore } from "../src/contract/context.js";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtDur, mdTable, summarize, timeUs } from "./stats.js";

type Store = ContextCapableStore & RegistryCapableStore;

const WORDS = "deploy server budget meeting travel doctor invoice garden recipe backup concert visa".split(
  " ",
);
const text = (i: number) =>
  `fact ${i}: ${Array.from({ length: 8 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(" ")}`;
const query = (q: number) => `${WORDS[q % WORDS.length]} ${WORDS[(q * 5 + 1) % WORDS.length]}`;

function keyring() {
  const key = crypto.getRandomValues(new Uint8Array(32));
  return { key: (owner: string) => (owner === "alice" ? key : undefined) };
}

interface Timings {
  write: { clear: number[]; sealed: number[] };
  search: { clear: number[]; sealed: number[] };
}

// Each store's label is `facts_<session>` of alice's session, so the entries are hers (sealed where she has a key).
async function measure(stores: Record<"clear" | "sealed", Store>, writes: number, searches: number) {
  const labels = {
    clear: `facts_${(await SessionManager.create(stores.clear).create("c", { owner: "alice" })).id}`,
    sealed: `facts_${(await SessionManager.create(stores.sealed).create("s", { owner: "alice" })).id}`,
  };
  const t: Timings = { write: { clear: [], sealed: [] }, search: { clear: [], sealed: [] } };
  const sides = ["clear", "sealed"] as const;
  for (let i = 0; i < writes; i++) {
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      t.write[side].push(await timeUs(() => stores[side].entries.setEntry(labels[side], `k${i}`, text(i))));
    }
  }
  for (let q = 0; q < searches; q++) {
    for (const side of q % 2 === 0 ? sides : [...sides].reverse()) {
      t.search[side].push(await timeUs(() => stores[side].entries.searchEntries(labels[side], query(q))));
    }
  }
  return t;
}

function rowsOf(backend: string, t: Timings): string[][] {
  return (["write", "search"] as const).map((op) => {
    const clear = summarize(t[op].clear).p50;
    const sealed = summarize(t[op].sealed).p50;
    const name = op === "write" ? "setEntry" : "searchEntries (two words)";
    return [backend, name, fmtDur(clear), fmtDur(sealed), `${(sealed / clear).toFixed(2)}×`];
  });
}

/** The sealed-entries table (a Postgres row that cannot connect says why instead). */
export async function benchContextSealing(scale = 1): Promise<string> {
  const writes = Math.max(50, Math.round(1000 * Math.min(1, scale)));
  const searches = Math.max(20, Math.round(300 * Math.min(1, scale)));
  const rows: string[][] = [];
  const dir = mkdtempSync(join(tmpdir(), "agent-session-context-sealing-bench-"));
  try {
    const clear = new SqliteStore(join(dir, "clear.db"));
    const sealed = new SqliteStore(join(dir, "sealed.db"), { keyring: keyring() });
    rows.push(...rowsOf("SQLite (file)", await measure({ clear, sealed }, writes, searches)));
    await Promise.all([clear.close(), sealed.close()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 });
  const schema = `agent_session_context_sealing_bench_${process.pid}`;
  const schemas = [schema, `${schema}_clear`];
  try {
    for (const name of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    const clear = await PostgresStore.open(pool, { schema: `${schema}_clear` });
    const sealed = await PostgresStore.open(pool, { schema, keyring: keyring() });
    rows.push(...rowsOf("Postgres", await measure({ clear, sealed }, writes, searches)));
    await Promise.all([clear.close(), sealed.close()]);
  } catch (error) {
    rows.push([
      "Postgres",
      `skipped: ${error instanceof Error ? error.message : String(error)}`,
      "–",
      "–",
      "–",
    ]);
  } finally {
    for (const name of schemas)
      await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`).catch(() => undefined);
    await pool.end();
  }
  return [
    "## Sealed search entries: an owner with a key against one without",
    "",
    `${writes} \`setEntry\` of a ~60-character entry to one label of each store, then ${searches} two-word ` +
      "searches of the label, interleaved.",
    "",
    mdTable(["backend", "operation", "clear p50", "sealed p50", "sealed / clear"], rows),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchContextSealing(Number(process.env.BENCH_SCALE ?? "1")));
}
