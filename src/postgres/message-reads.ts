// The statements a Postgres session provider reads single messages with.
import { statement } from "./schema.js";

/** One message of a session by id: $1 session, $2 id. */
export const messageSql = statement(
  (t) => `SELECT m.content FROM ${t.heads} h JOIN ${t.messages} m ON m.session_num = h.num
    WHERE h.session_id = $1 AND m.id = $2`,
);
/** The latest leaf of session $1. */
export const latestSql = statement(
  (t) =>
    `SELECT m.content FROM ${t.heads} h JOIN ${t.messages} m ON m.seq = h.leaf_seq WHERE h.session_id = $1`,
);
/** The children of message $2 of session $1, oldest first. */
export const branchesSql = statement(
  (t) => `SELECT c.content FROM ${t.heads} h JOIN ${t.messages} p ON p.session_num = h.num
    JOIN ${t.messages} c ON c.parent_seq = p.seq WHERE h.session_id = $1 AND p.id = $2 ORDER BY c.seq`,
);
