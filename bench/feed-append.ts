// What the change log adds to an append: the same appends into two stores, one with `changeLog` and one without,
// in interleaved rounds (the machine is shared, so alternating keeps both exposed to the same load), on a SQLite
// file and, when AGENT_SESSION_PG_URL is reachable, on Postgres. Also one local subscriber, to show that
// delivering events costs the writer nothing it waits for.
//   npm run bench:script bench/feed-append.ts [rounds] [appendsPerRound]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionStore } from "../src/contract/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";

const rounds = Number(process.argv[2] ?? 8);
const perRound = Number(process.argv[3] ?? 1000);

interface Variant {
  name: string;
  store: SessionStore;
  next: number;
  samples: number[];
}

async function round(variant: Variant): Promise<void> {
  const provider = variant.store.session("bench");
  const start = process.hrtime.bigint();
  for (let i = 0; i < perRound; i++) {
    const id = `m${variant.next++}`;
    await provider.appendMessage({
      id,
      role: "user",
      parts: [{ type: "text", text: `message ${id} with some words` }],
    });
  }
  variant.samples.push(Number(process.hrtime.bigint() - start) / 1000 / perRound);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function compare(label: string, variants: Variant[]): Promise<void> {
  for (const v of variants) await round(v); // warm-up, not counted
  for (const v of variants) v.samples = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate the order too, so neither variant always runs first.
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) await round(v);
  }
  const base = median(variants[0]?.samples ?? []);
  console.log(`${label}: ${rounds} rounds x ${perRound} appends, median µs per append`);
  for (const v of variants) {
    const m = median(v.samples);
    console.log(
      `  ${v.name.padEnd(28)} ${m.toFixed(1).padStart(7)} µs  (${((m / base - 1) * 100).toFixed(0)}%)  after ${v.next} appends`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), "feed-bench-"));
try {
  const plain = new SqliteStore(join(dir, "plain.db"));
  const logged = new SqliteStore(join(dir, "logged.db"), { changeLog: true });
  const listened = new SqliteStore(join(dir, "listened.db"), { changeLog: true });
  let heard = 0;
  (listened as SqliteStore).subscribe(() => {
    heard++;
  });
  await compare("sqlite file", [
    { name: "no change log", store: plain, next: 0, samples: [] },
    { name: "change log", store: logged, next: 0, samples: [] },
    { name: "change log + 1 subscriber", store: listened, next: 0, samples: [] },
  ]);
  console.log(`  (the subscriber heard ${heard} events)`);
  await Promise.all([plain.close(), logged.close(), listened.close()]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const url = process.env.AGENT_SESSION_PG_URL;
if (url) {
  const pg = (await import("pg")).default;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    const schemas = ["feed_bench_plain", "feed_bench_logged"] as const;
    for (const s of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    const plain = await PostgresStore.open(pool, { schema: schemas[0] });
    const logged = await PostgresStore.open(pool, { schema: schemas[1], changeLog: true });
    await compare("postgres", [
      { name: "no change log", store: plain, next: 0, samples: [] },
      { name: "change log (+ NOTIFY)", store: logged, next: 0, samples: [] },
    ]);
    await plain.close();
    await logged.close();
    for (const s of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  } catch (error) {
    console.log(`postgres skipped: ${(error as Error).message}`);
  } finally {
    await pool.end();
  }
}
