/**
 * The messages the vector channel has to embed on Postgres: those without a vector, or whose text changed since it
 * was embedded, with the text to embed and the stored vector's text hash (a text embedded already is kept). The
 * SQLite twin is src/sql/vectors/sqlite-pending.ts.
 */
import { storedMessageText } from "../../message/text.js";
import type { PendingText } from "../../search/vectors/types.js";
import { isSealed } from "../../store/crypto/seal.js";
import type { Executor } from "../engines/postgres/client.js";
import type { Tables } from "../engines/postgres/tables.js";
import { CURRENT, type VectorTables } from "./postgres-schema.js";

interface PendingRow {
  seq: string | number;
  session_num: string | number;
  content: string;
  content_hash: string | null;
  stored: string | null;
}

function pendingSql(t: Tables, v: VectorTables, where: string): string {
  return `SELECT m.seq, m.session_num, m.content, m.content_hash,
    CASE WHEN v.session_num = m.session_num THEN v.text_hash END AS stored
    FROM ${t.messages} m LEFT JOIN ${v.vectors} v ON ${v.joinOn}
    WHERE ${where} AND (v.seq IS NULL OR NOT (${CURRENT})) ORDER BY m.seq`;
}

// An encrypted owner's message gets no vector (its text would reach the embedder and the vector table): its empty
// text is recorded as embedded, so it is not pending again (as on SQLite).
function pendingRows(rows: PendingRow[]): PendingText[] {
  return rows.map((row) => ({
    seq: Number(row.seq),
    session: Number(row.session_num),
    text: isSealed(row.content) ? "" : storedMessageText(row.content),
    contentHash: row.content_hash,
    storedTextHash: row.stored,
  }));
}

/** The pending messages after seq `after`, at most `limit`, oldest first. */
export async function pendingAfter(
  executor: Executor,
  t: Tables,
  v: VectorTables,
  after: number,
  limit: number,
): Promise<PendingText[]> {
  const rows = await executor.query<PendingRow>(`${pendingSql(t, v, "m.seq > $1")} LIMIT $2`, [after, limit]);
  return pendingRows(rows);
}

/** The pending messages among `ids` of the session `sessionId`, oldest first. */
export async function pendingAmong(
  executor: Executor,
  t: Tables,
  v: VectorTables,
  sessionId: string,
  ids: readonly string[],
): Promise<PendingText[]> {
  const rows = await executor.query<PendingRow>(
    pendingSql(
      t,
      v,
      v.layout.rowsCarrySession
        ? "m.session_id = $1 AND m.id = ANY($2::text[])"
        : `m.session_num = (SELECT num FROM ${t.heads} WHERE session_id = $1) AND m.id = ANY($2::text[])`,
    ),
    [sessionId, ids],
  );
  return pendingRows(rows);
}
