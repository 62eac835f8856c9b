// What the "purge reaches everything" tests share (docs/PRIVACY.md): an owner's resumable answers, an encrypted
// owner's key row, statistics sampled while both were stored, then both owners erased; and where their traces can
// still be found: pages, and the planner statistics pg_stats shows the store's role.

import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { hasStreamStore } from "../../src/contract/streams.js";
import { SessionManager } from "../../src/manager/manager.js";
import { ownerHash } from "../../src/store/owner.js";
import { msg } from "../../src/testing/contract/harness.js";
import { randomKeyring } from "./encryption.js";
import { MARKER } from "./purge.js";

/** The unencrypted owner whose answers are streamed; its id is a marker too. */
export const STREAMER = "zqxownercarolq";
/** The encrypted owner (its key row holds a hash of its id). */
export const KEYED = "zqxowneraliceq";
/** What an erased owner leaves nowhere: the marker, the owner ids and the keyed owner's id hash. */
export const ERASED_TRACES = [MARKER, STREAMER, KEYED, ownerHash(KEYED)];

/** A keyring holding the keyed owner's key. */
export const reachKeyring = () => randomKeyring([KEYED]);

/**
 * Writes the streaming owner's sessions (messages and finished streamed answers carrying the marker, one answer
 * still running at erasure), the keyed owner's session and the kept owner's; `analyze` samples the statistics (as
 * autovacuum would) while all of it is stored; then erases both owners. The keeper's data stays.
 */
export async function streamKeyAndErase(
  store: RegistryCapableStore,
  analyze: () => Promise<void>,
): Promise<void> {
  if (!hasStreamStore(store)) throw new Error("the store keeps no streams");
  const manager = SessionManager.create(store);
  const keeper = await manager.create("keeper notes", { owner: "keeper" });
  await manager.append(keeper.id, msg("k0", "kept words of the keeper"));
  await store.streams.start(keeper.id, "keep-1", Date.now());
  await store.streams.append(keeper.id, "keep-1", [{ seq: 0, chunk: "kept chunk" }], Date.now());
  for (let s = 0; s < 3; s++) {
    const { id } = await manager.create(`${STREAMER} ${MARKER} chat ${s}`, { owner: STREAMER });
    await manager.append(id, msg(`s${s}`, `streamer says ${MARKER} ${s}`));
    for (let a = 0; a < 3; a++) {
      const stream = `answer-${s}-${a}`;
      await store.streams.start(id, stream, Date.now());
      const chunks = Array.from({ length: 20 }, (_, seq) => ({ seq, chunk: `data: ${MARKER} part ${seq}` }));
      await store.streams.append(id, stream, chunks, Date.now());
      // The last answer of each session is still running when the owner is erased; the others finished.
      if (a < 2) await store.streams.end(id, stream, null, Date.now());
    }
  }
  // A finished answer of the keeper dropped: its chunks are deleted rows like an erased owner's.
  await store.streams.start(keeper.id, "keep-2", Date.now());
  await store.streams.append(keeper.id, "keep-2", [{ seq: 0, chunk: `data: ${MARKER}` }], Date.now());
  await store.streams.end(keeper.id, "keep-2", null, Date.now());
  await store.streams.drop(keeper.id, "keep-2");
  const keyed = await manager.create("sealed chat", { owner: KEYED });
  await manager.append(keyed.id, msg("a0", "sealed words"));
  await analyze();
  await manager.eraseOwner(STREAMER);
  await manager.eraseOwner(KEYED);
}

/** Anything with `query` (a pg Pool or Client, PGlite). */
interface Runner {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * The statistics of `schema`'s relations (tables and index expressions) that hold one of `needles`, as
 * `table.column: needle`: most common values and elements, histogram bounds. On a Citus worker, run on a
 * connection with `citus.override_table_visibility` off, or its shards' statistics are hidden.
 */
export async function statisticsHolding(
  db: Runner,
  schema: string,
  needles: readonly string[] = ERASED_TRACES,
): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT s.tablename || '.' || s.attname || ': ' || n AS hit FROM pg_stats s, unnest($2::text[]) AS n
      WHERE s.schemaname = $1 AND concat(s.most_common_vals::text, s.histogram_bounds::text,
        s.most_common_elems::text) LIKE '%' || n || '%'
      ORDER BY 1`,
    [schema, [...needles]],
  );
  return (rows as { hit: string }[]).map((r) => r.hit);
}

/** ANALYZE of every table of `schema` (autovacuum's own analyze, run now). */
export async function analyzeSchema(db: Runner, schema: string): Promise<void> {
  const { rows } = await db.query(
    "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1",
    [schema],
  );
  for (const { name } of rows as { name: string }[]) await db.query(`ANALYZE ${name}`);
}

/**
 * Pages of the catalog `pg_statistic` and its TOAST table holding `text`, read with pageinspect's `get_raw_page`
 * (a superuser's): unlike `pg_stats`, they show the dead tuples an `ANALYZE` replaced until the catalog is vacuumed.
 * The catalog is the database's, every schema's statistics in it: a text unique to the caller finds only its own.
 */
export async function statisticsPagesHolding(db: Runner, text: string): Promise<number> {
  const { rows: has } = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'pageinspect'");
  if (has.length === 0) await db.query("CREATE EXTENSION pageinspect");
  const { rows } = await db.query(
    `SELECT count(*)::int AS pages FROM (
       SELECT oid FROM pg_class WHERE oid = 'pg_catalog.pg_statistic'::regclass
       UNION ALL SELECT reltoastrelid FROM pg_class WHERE oid = 'pg_catalog.pg_statistic'::regclass) r,
       generate_series(0, pg_relation_size(r.oid) / current_setting('block_size')::int - 1) AS b
      WHERE position(convert_to($1, 'UTF8') IN get_raw_page(r.oid::regclass::text, b::int)) > 0`,
    [text],
  );
  return (rows as { pages: number }[])[0]?.pages ?? 0;
}
