/**
 * The SQL stores' session import, where its steps are the same on both engines: the latest leaf an import that
 * added messages ends with (the exported leaf when it is stored, otherwise the newest childless row, as the
 * reference chooses), a program over a table per engine. The batches themselves are each engine's own, on
 * purpose: SQLite writes item by item inside its one write transaction (chunked content, FTS rows), Postgres a
 * batch's messages in one `unnest` INSERT whose tree columns it computes from the stored parents' spines, so a
 * batch costs a few round trips however long it is (sqlite/transfer/import.ts, postgres/transfer/import.ts).
 */
import type { Program, Statement } from "../sql/program.js";

/** A session as the leaf statements name it: its head's number, and its id (Citus routes by it). */
export interface ImportedSession {
  num: number | string;
  id: string;
}

/** One engine's statements for {@link setLeaf}. */
export interface LeafStatements {
  /** Locks the head row (none where the write transaction already excludes every writer); no row: it is gone. */
  lock(session: ImportedSession): Statement | undefined;
  /** The stored row (`seq`) of the exported leaf. */
  leaf(session: ImportedSession, leafId: string): Statement;
  /** The newest childless row (`seq`, null without one). */
  newest(session: ImportedSession): Statement;
  /** Points the head at `leaf` (null: no messages), stamped `now`. */
  point(session: ImportedSession, leaf: unknown, now: string): Statement;
}

/** Sets the session's latest leaf after an import: the exported one when it is stored, else the newest childless row. */
export function* setLeaf(
  table: LeafStatements,
  session: ImportedSession,
  leafId: string | null,
): Program<void> {
  const lock = table.lock(session);
  if (lock && (yield lock).length === 0) return;
  const [stored] = leafId === null ? [] : yield table.leaf(session, leafId);
  const leaf = stored?.seq ?? (yield table.newest(session))[0]?.seq ?? null;
  yield table.point(session, leaf, new Date().toISOString());
}
