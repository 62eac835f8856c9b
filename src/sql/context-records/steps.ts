/**
 * The records of context rows (contract/context.ts ContextRecord), written once for SQLite and Postgres: the keys
 * recorded so, the erasure of a session's or an owner's blocks and entries, which ids are stored sessions and owners,
 * and the backfill of schema step 22 (rows stored before records existed). A record travels as its two columns,
 * `[session_id, owner]` (context/records.ts recordParams). The statement text is each engine's table
 * (sqlite.ts, postgres.ts beside this file): SQLite drops an entry's FTS row
 * with it, a step of two statements there; on Citus each table's delete is its own statement, since blocks and
 * entries are sharded by key and label.
 */
import type { KnownIds, LegacyRule } from "../../context/legacy-records.js";
import type { RecordParams } from "../../context/records.js";
import type { Program, Row, Step } from "../program.js";

export type { KnownIds, LegacyRule, RecordParams };

/** The kind of context row: a block (named by its key) or an entry (named by its label). */
export type ContextTable = "blocks" | "entries";

/** An engine's statements of the records of context rows. */
export interface RecordStatements {
  /** The keys of the blocks recorded so, in byte order of UTF-8. */
  recordedKeys(record: RecordParams): Step;
  /** A key as {@link recordedKeys} answers it. */
  keyOf(row: Row): string;
  /** Deletes the rows of `table` recorded so, answering what went (see {@link gone}). */
  deleteRecorded(table: ContextTable, record: RecordParams): Step;
  /**
   * Deletes the rows of `table` recorded for session `id`, and its unrecorded ones that `names` name (by key or
   * label) or that are recorded as `id`'s: a name listed never removes another session's or an owner's row.
   */
  deleteKeyed(table: ContextTable, id: string, names: readonly string[]): Step;
  /** How many rows a delete took, from its answer. */
  gone(rows: Row[]): number;
  /** Which of `ids` are stored sessions (registered or holding a head): rows `id`; no statement may answer `[]`. */
  knownSessions(ids: readonly string[]): Step;
  /** Which of `ids` are owners of registered sessions: rows `owner`. */
  knownOwners(ids: readonly string[]): Step;
  /** True when the backfill reads names a page at a time, false when one read answers them all. */
  readonly paged: boolean;
  /** The backfill's names of `table` (rows `name`): after `after` in byte order when paged, else every one. */
  names(table: ContextTable, after: string | null): Step;
  /** Records every row of `table` named `name` so. */
  setRecord(table: ContextTable, name: string, record: RecordParams): Step;
}

/** How many names the backfill resolves per look-up of known ids. */
const BATCH = 500;

/** The keys of the blocks recorded so. */
export function* recordedKeys(s: RecordStatements, record: RecordParams): Program<string[]> {
  return (yield s.recordedKeys(record)).map((row) => s.keyOf(row));
}

/** Deletes the blocks and entries recorded so, in the caller's transaction; how many of each. */
export function* deleteRecorded(
  s: RecordStatements,
  record: RecordParams,
): Program<{ blocks: number; entries: number }> {
  const blocks = s.gone(yield s.deleteRecorded("blocks", record));
  const entries = s.gone(yield s.deleteRecorded("entries", record));
  return { blocks, entries };
}

/**
 * Deletes, in the caller's transaction, every block and entry recorded for session `id`, and the unrecorded blocks
 * of `keys` and entries filed under them; how many of each.
 */
export function* deleteKeyed(
  s: RecordStatements,
  id: string,
  keys: readonly string[],
): Program<{ blocks: number; entries: number }> {
  const blocks = s.gone(yield s.deleteKeyed("blocks", id, keys));
  const entries = s.gone(yield s.deleteKeyed("entries", id, keys));
  return { blocks, entries };
}

/** Which of `ids` are stored sessions (registered or holding a head), and which are owners of registered ones. */
export function* knownIds(s: RecordStatements, ids: readonly string[]): Program<KnownIds> {
  const sessions = (yield s.knownSessions(ids)).map((row) => String(row.id));
  const owners = (yield s.knownOwners(ids)).map((row) => String(row.owner));
  return { sessions: new Set(sessions), owners: new Set(owners) };
}

/** Schema step 22's backfill: blocks, then entries, are given a record where the old rule is unambiguous. */
export function* backfillRecords(s: RecordStatements, rule: LegacyRule): Program<void> {
  yield* backfill(s, rule, "blocks");
  yield* backfill(s, rule, "entries");
}

function* backfill(s: RecordStatements, rule: LegacyRule, table: ContextTable): Program<void> {
  let after: string | null = null;
  for (;;) {
    const rows: Row[] = yield s.names(table, after);
    const names = rows.map((row) => String(row.name));
    if (names.length === 0) return;
    for (let at = 0; at < names.length; at += BATCH) {
      const batch = names.slice(at, at + BATCH);
      const known = yield* knownIds(s, [...new Set(batch.flatMap((name) => rule.candidates(name)))]);
      for (const name of batch) {
        const record = rule.record(name, known);
        if (record) yield s.setRecord(table, name, record);
      }
    }
    if (!s.paged) return;
    after = names[names.length - 1]!;
  }
}
