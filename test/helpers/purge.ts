// What the purge tests share: a known string written where a session's text lives (messages, a compaction summary,
// a block, search entries, a learned fact), deleted every way the API deletes, and how many times it is left in a store's bytes.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { blockKey } from "../../src/context/block-keys.js";
import { hasFactStore } from "../../src/contract/facts.js";
import type { SessionStore } from "../../src/contract/store.js";
import { SessionManager } from "../../src/manager/manager.js";
import { fact } from "../../src/testing/contract/facts-harness.js";
import { msg } from "../../src/testing/contract/harness.js";

/** The string that must leave the store's files; one word, so the search index holds it as a term too. */
export const MARKER = "zqxpurgemarkerq";

/** A store the scenario can write blocks and entries to. */
type FullStore = SessionStore & {
  blocks: {
    setBlock(key: string, content: string): Promise<void>;
    deleteBlocks(keys: string[]): Promise<void>;
  };
  entries: {
    setEntry(label: string, key: string, content: string): Promise<void>;
    deleteEntries(label: string): Promise<void>;
  };
};

const text = (i: number) => `secret ${MARKER} number ${i} ${"filler words of a message ".repeat(8)}`;
const kept = (i: number) => `kept text number ${i} ${"other words of a message ".repeat(8)}`;

/**
 * Writes the marker into 50 messages of one session (interleaved with a kept session's messages, so pages hold
 * both), a compaction summary, a block and search entries, plus 20 marked messages cleared with `clearMessages`
 * and 10 removed with `deleteMessages`, and a fact (removed with `facts.delete`); searches, so the indexes hold the
 * marker; then deletes every marked thing.
 */
export async function writeAndDelete(store: SessionStore): Promise<void> {
  const full = store as FullStore;
  const manager = new SessionManager(store);
  const keep = await manager.create("kept");
  const gone = await manager.create("deleted");
  const cleared = await manager.create("cleared");
  for (let i = 0; i < 50; i++) {
    await manager.append(keep.id, msg(`k${i}`, kept(i)));
    await manager.append(gone.id, msg(`g${i}`, text(i)));
    if (i < 20) await manager.append(cleared.id, msg(`c${i}`, text(i)));
    if (i < 20) await manager.append(keep.id, msg(`d${i}`, i < 10 ? text(i) : kept(i)));
  }
  await manager.addCompaction(gone.id, `summary of ${MARKER}`, "g0", "g10");
  await full.blocks.setBlock(blockKey("notes", gone.id), `notes about ${MARKER}`);
  await full.entries.setEntry("facts", "one", `fact about ${MARKER}`);
  const facts = hasFactStore(store) ? store.facts : null;
  const scope = { sessionId: keep.id };
  await facts?.add(scope, [fact(`a fact about ${MARKER}`, [[keep.id, "k0"]], { id: "marked" })]);
  if (facts && (await facts.search(scope, MARKER)).length === 0)
    throw new Error("the fact index should hold it");
  const hits = await store.searchMessages(MARKER, { limit: 100 });
  if (hits.length === 0) throw new Error("the search index should hold the marker before the deletes");
  await manager.delete(gone.id);
  await manager.clearMessages(cleared.id);
  await manager.deleteMessages(
    keep.id,
    Array.from({ length: 10 }, (_, i) => `d${i}`),
  );
  await full.blocks.deleteBlocks([blockKey("notes", gone.id)]);
  await full.entries.deleteEntries("facts");
  if (facts && !(await facts.delete(scope, "marked"))) throw new Error("the fact should be deleted");
  if ((await store.searchMessages(MARKER)).length !== 0) throw new Error("the deletes should leave no hit");
}

/** Occurrences of the marker in each of `paths` that exists (a missing WAL or shm file counts nothing). */
export function markersInFiles(paths: readonly string[]): Record<string, number> {
  const found: Record<string, number> = {};
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const bytes = readFileSync(path);
    let count = 0;
    for (let at = bytes.indexOf(MARKER); at >= 0; at = bytes.indexOf(MARKER, at + 1)) count++;
    found[path] = count;
  }
  return found;
}

/** Every file under `root`, however deep (a PGlite data directory: relations, catalog, WAL segments). */
export function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}

/** The files of a SQLite database at `path`: the database, its write-ahead log and its shared-memory index. */
export function sqliteFiles(path: string): string[] {
  return [path, `${path}-wal`, `${path}-shm`];
}

/** Anything with `query` (a pg Pool or Client, PGlite). */
interface Runner {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Pages holding the marker (or `marker`) in every relation of `schema` (tables, their TOAST tables and every index of both),
 * read with pageinspect's `get_raw_page`, which sees dead tuples and the free space of pages; by relation name.
 */
export async function markersInRelations(
  db: Runner,
  schema: string,
  marker = MARKER,
): Promise<Record<string, number>> {
  // Created only when missing: a Citus worker refuses the statement even then (the coordinator propagates it).
  const { rows: has } = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'pageinspect'");
  if (has.length === 0) await db.query("CREATE EXTENSION pageinspect");
  const { rows } = await db.query(
    `WITH tables AS (
       SELECT c.oid, c.reltoastrelid FROM pg_class c
       WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'),
     rels AS (
       SELECT oid FROM tables
       UNION SELECT reltoastrelid FROM tables WHERE reltoastrelid <> 0
       UNION SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT oid FROM tables)
       UNION SELECT i.indexrelid FROM pg_index i WHERE i.indrelid IN (SELECT reltoastrelid FROM tables))
     SELECT c.oid::regclass::text AS name,
       (SELECT count(*) FROM generate_series(0, pg_relation_size(c.oid) / current_setting('block_size')::int - 1) AS b
        WHERE position(convert_to($2, 'UTF8') IN get_raw_page(c.oid::regclass::text, b::int)) > 0)::int AS pages
     FROM rels JOIN pg_class c ON c.oid = rels.oid`,
    [schema, marker],
  );
  const found: Record<string, number> = {};
  for (const row of rows as { name: string; pages: number }[]) found[row.name] = row.pages;
  return found;
}

/** The sum of a count per file or relation. */
export function total(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/**
 * Purges until the report is complete: other test files share the Postgres server, and a transaction of theirs
 * open since before the purge keeps deleted rows readable, which the report says ("open snapshots"); in a database of
 * the file's own (fixtures/own-database.ts) only one that took a transaction id before the deletes still makes
 * VACUUM FULL keep them ("dead rows"); on the Citus cluster, which the files share, any of theirs still counts. Gives
 * up after `tries` and answers the last report.
 */
export async function purgeUntilComplete<R extends { complete: boolean }>(
  purge: () => Promise<R>,
  tries = 40,
): Promise<R> {
  let report = await purge();
  for (let i = 1; i < tries && !report.complete; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    report = await purge();
  }
  return report;
}

/**
 * What a failed scan of `schema` found, to name it in the assertion: the pages holding `marker` by relation, each heap
 * or TOAST tuple holding it with its xmin, xmax and their status (a row written after the erasure, or a dead row the
 * rewrite kept), and the backends of the server holding a transaction or a snapshot (who held the horizon back).
 */
export async function residueOf(db: Runner, schema: string, marker: string): Promise<string> {
  const { rows: tuples } = await db.query(
    `SELECT c.oid::regclass::text AS rel, b AS page, h.lp, h.t_xmin::text AS xmin, h.t_xmax::text AS xmax,
       txid_status(h.t_xmin::text::bigint) AS xmin_status,
       CASE WHEN h.t_xmax::text <> '0' THEN txid_status(h.t_xmax::text::bigint) END AS xmax_status
     FROM pg_class c, generate_series(0, pg_relation_size(c.oid) / current_setting('block_size')::int - 1) AS b,
       heap_page_items(get_raw_page(c.oid::regclass::text, b::int)) AS h
     WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 't')
       AND position(convert_to($2, 'UTF8') IN coalesce(h.t_data, ''::bytea)) > 0`,
    [schema, marker],
  );
  const { rows: backends } = await db.query(
    `SELECT pid, datname, backend_type, state, backend_xmin::text, backend_xid::text FROM pg_stat_activity
     WHERE backend_xmin IS NOT NULL OR backend_xid IS NOT NULL`,
  );
  const pages = await markersInRelations(db, schema, marker);
  return JSON.stringify({ pages, tuples, backends });
}
