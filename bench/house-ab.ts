/**
 * A/B of the everyday operations between this checkout and another (BASE, a path to its repo root with
 * node_modules linked), in one process, alternating in blocks so machine noise hits both alike: append (a session
 * growing to N messages), history (the whole path of that session) and a two-word search, on SQLite (a file) and
 * on PostgreSQL (127.0.0.1:5432, a schema of its own per target; skipped with a reason when unreachable). A
 * refactor that should not change the hot paths is read from the p50 ratios.
 * `BASE=/tmp/base N=2000 npm run bench:script bench/house-ab.ts`
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { makeMessage, rng } from "./data.js";
import { nowUs, summarize } from "./stats.js";
import { removeDbFiles } from "./workloads.js";

const size = Number(process.env.N ?? 2000);
const block = 100;
const base = process.env.BASE;
if (!base) throw new Error("BASE must name the other checkout (its repo root, node_modules linked)");
const pgUrl = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dir = join(process.cwd(), ".bench-data", "house-ab");
mkdirSync(dir, { recursive: true });

interface StoreLike {
  session(id: string): {
    appendMessage(m: unknown): Promise<unknown>;
    getHistory(): Promise<unknown[]>;
  };
  searchMessages(q: string, o: object): Promise<unknown[]>;
  close(): Promise<void>;
}
interface Checkout {
  name: string;
  sqlite: new (path: string) => StoreLike;
  postgres: new (source: string, options: object) => StoreLike;
}

async function checkout(name: string, root: string): Promise<Checkout> {
  const sqlite = await import(pathToFileURL(join(root, "src/sqlite/store.ts")).href);
  const postgres = await import(pathToFileURL(join(root, "src/postgres/store.ts")).href);
  return { name, sqlite: sqlite.SqliteStore, postgres: postgres.PostgresStore };
}

async function postgresReachable(): Promise<string | undefined> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${pgUrl} unreachable: ${(error as Error).message}`;
  }
}

const r = rng(11);
const messages = Array.from({ length: size }, (_, i) =>
  makeMessage(r, `m${i}`, i % 2 ? "assistant" : "user"),
);
const checkouts = [await checkout("BASE", base), await checkout("this", process.cwd())];

async function run(
  engine: "SQLite" | "Postgres",
  open: (c: Checkout, i: number) => StoreLike,
): Promise<void> {
  const stores = checkouts.map(open);
  const samples = checkouts.map(() => ({
    append: [] as number[],
    history: [] as number[],
    search: [] as number[],
  }));
  for (let start = 0; start < size; start += block) {
    for (const [i, store] of stores.entries()) {
      // The other target's idle work (SQLite indexes and checkpoints once its caller yields) runs before this
      // block is timed, not inside it.
      await new Promise((resolve) => setTimeout(resolve, 30));
      const session = store.session(`ab${i}`);
      for (let k = start; k < Math.min(size, start + block); k++) {
        const t0 = nowUs();
        await session.appendMessage(messages[k]);
        samples[i]!.append.push(nowUs() - t0);
      }
      for (let k = 0; k < 5; k++) {
        let t0 = nowUs();
        await session.getHistory();
        samples[i]!.history.push(nowUs() - t0);
        t0 = nowUs();
        await store.searchMessages("harbour ferry", { limit: 10, sessionId: `ab${i}` });
        samples[i]!.search.push(nowUs() - t0);
      }
    }
  }
  for (const store of stores) await store.close();
  for (const op of ["append", "history", "search"] as const) {
    const [a, b] = samples.map((s) => summarize(s[op]).p50);
    console.log(`| ${engine} ${op} | ${a!.toFixed(0)} µs | ${b!.toFixed(0)} µs | ${(b! / a!).toFixed(2)} |`);
  }
}

console.log(`N=${size}\n| operation (p50) | BASE | this | this / BASE |\n| --- | --- | --- | --- |`);
await run("SQLite", (c, i) => {
  const file = join(dir, `ab-${i}.db`);
  removeDbFiles(file);
  return new c.sqlite(file);
});
const unreachable = await postgresReachable();
if (unreachable) console.log(`Postgres skipped: ${unreachable}`);
else {
  const schemas = checkouts.map((_, i) => `house_ab_${Date.now().toString(36)}_${i}`);
  await run("Postgres", (c, i) => new c.postgres(pgUrl, { schema: schemas[i] }));
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}
