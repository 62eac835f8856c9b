/**
 * A session's erasure, written once for SQLite and Postgres (docs/PRIVACY.md, "Erasure"): which rows go, in what
 * order, under what condition, and the counts the receipt sums. It runs inside the caller's transaction, one per
 * session, so a reader sees the whole session or none of it and a crash rolls the session back whole. The statement
 * text is each engine's table (sqlite.ts, postgres.ts); the `erased` event is logged by the caller after the
 * program, in the same transaction.
 */
import { countsOf, type ErasureCondition, type ErasureCounts, meetsCondition } from "../../store/erasure.js";
import { countOf, type Program, type Row, type Step } from "../program.js";

/** How a read of the head or registry row locks it: not, `FOR UPDATE`, or `FOR UPDATE SKIP LOCKED`. */
export type EraseLock = "none" | "update" | "skip";

/** An engine's statements of an erasure; the table names the session `id` and its head number `num`. */
export interface EraseStatements {
  /** Whether the engine locks rows (Postgres): a sweep's erase then skips a session another transaction holds. */
  readonly locks: boolean;
  /** The session's head (`num`), read under `lock`. */
  head(id: string, lock: EraseLock): Step;
  /** The registry row (`updated_at` as ISO text, `pinned`, `owner`, `source`), read under `lock`. */
  row(id: string, lock: EraseLock): Step;
  /** The ids of the owner's `n` newest sessions (`id`), in list({ owner })'s order: one range of its index. */
  newest(owner: string, n: number): Step;
  /** A row when the table created on first use exists (the vectors' or the change log's). */
  present(table: "vectors" | "changes"): Step;
  /** The session's vector rows (`n`), counted before the messages take them with them. */
  vectors(num: unknown): Step;
  /** How many payloads the session's release frees: those no message of another session links. */
  freed(id: string, num: unknown): Program<number>;
  /** Deletes messages (their search rows, vectors, payload links and freed payloads), overlays and the head. */
  content(id: string, num: unknown): Program<{ messages: number; compactions: number }>;
  /** Deletes the blocks and entries recorded for the session and the unrecorded ones of `keys`: `blocks`, `entries`. */
  keyed(id: string, keys: readonly string[]): Step;
  /** Deletes the session's change-log rows (one range of the log's session index), answering what went. */
  changes(id: string): Step;
  /** Deletes every fact with a source in the session, whatever its scope, and its learn mark (sql/facts/). */
  facts(id: string): Program<number>;
  /** Deletes a running answer's stream head and chunks. */
  streams(id: string): Step;
  /** Deletes the session's rows of every storage room (src/sql/rooms/: a LangGraph thread's checkpoints among them). */
  rooms(id: string): Step;
  /** Deletes the registry row, answering what went. */
  session(id: string): Step;
  /** How many rows `changes` or `session` took, from its answer. */
  gone(rows: Row[]): number;
}

/** The registry row as the condition reads it (SQLite answers `pinned` 0/1, Postgres a boolean). */
function infoOf(row: Row): { updated_at: string; pinned?: true; owner?: string; source: string | null } {
  return {
    updated_at: String(row.updated_at),
    source: (row.source ?? null) as string | null,
    ...(row.pinned === true || Number(row.pinned ?? 0) === 1 ? { pinned: true as const } : {}),
    ...(typeof row.owner === "string" ? { owner: row.owner } : {}),
  };
}

/**
 * The registry's erase of session `id`: reads its head, then its registry row (the order appends and deletes lock
 * them on Postgres), checks `condition` on the row (and, with `keepNewest`, that it is not among its owner's newest,
 * read in the same transaction), and erases. With `skipLocked` (a sweep) on an engine that locks,
 * a head or row another transaction holds is skipped: a concurrent sweeper is erasing it, or a writer writing to it,
 * and it is not inactive then. Null: nothing there, condition unmet, or skipped.
 */
export function* eraseUnder(
  s: EraseStatements,
  id: string,
  keys: readonly string[],
  condition: ErasureCondition,
): Program<ErasureCounts | null> {
  const lock: EraseLock = !s.locks ? "none" : condition.skipLocked ? "skip" : "update";
  if (lock === "skip") {
    const stored = yield s.head(id, "none");
    const locked = yield s.head(id, "skip");
    if (stored.length > 0 && locked.length === 0) return null;
  }
  const [head] = yield s.head(id, lock);
  const [row] = yield s.row(id, lock);
  if (!meetsCondition(row && infoOf(row), condition)) return null;
  if (!head && !row) return null;
  const { keepNewest } = condition;
  if (keepNewest && typeof row?.owner === "string") {
    const newest = yield s.newest(row.owner, keepNewest);
    if (newest.some((kept) => kept.id === id)) return null;
  }
  return yield* eraseSession(s, id, head?.num, keys);
}

/**
 * Erases session `id` (head `num`, when it has stored data): its vectors and freed payloads counted, then its
 * messages with what hangs on them, overlays and head; every block and entry recorded for it, the unrecorded blocks
 * of `keys` and entries filed under them; its change-log rows, every fact with a source in it and its learn mark,
 * a running answer's chunks, its rows of the storage rooms, and its registry row.
 * Answers the counts.
 */
export function* eraseSession(
  s: EraseStatements,
  id: string,
  num: unknown,
  keys: readonly string[],
): Program<ErasureCounts> {
  const counts = countsOf(undefined);
  if (num !== undefined) {
    if ((yield s.present("vectors")).length > 0) counts.vectors = countOf(yield s.vectors(num));
    counts.attachments = yield* s.freed(id, num);
    const content = yield* s.content(id, num);
    counts.messages = content.messages;
    counts.compactions = content.compactions;
  }
  const keyed = yield s.keyed(id, keys);
  counts.blocks = countOf(keyed, "blocks");
  counts.entries = countOf(keyed, "entries");
  if ((yield s.present("changes")).length > 0) counts.changes = s.gone(yield s.changes(id));
  counts.facts = yield* s.facts(id);
  yield s.streams(id);
  yield s.rooms(id);
  counts.sessions = s.gone(yield s.session(id));
  return counts;
}
