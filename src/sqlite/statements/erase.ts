/**
 * SQLite's statements of a session's erasure (sql/erase/steps.ts has the steps). SQLite locks the whole database
 * for the writer, so its reads take no row lock; the content delete and the keyed and stream deletes are the
 * helpers a session's delete and clear run too (writes.ts, context-records.ts, streams.ts).
 */

import { call } from "../../sql/engines/sqlite/program.js";
import type { EraseStatements } from "../../sql/erase/steps.js";
import { forgetSessionFacts } from "../../sql/facts/steps.js";
import { command, countOf, query, type Row } from "../../sql/program.js";
import { deleteKeyed } from "../context-records.js";
import { STORE_TABLES } from "../media/tables.js";
import { forgetStream } from "../streams.js";
import { deleteSessionContent } from "../writes.js";
import { sqliteFacts } from "./facts.js";

const TABLE_PRESENT = "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?";

// The payloads linked by the session's messages that no message of another session links: what its release frees.
const FREED_PAYLOADS = `SELECT count(DISTINCT l.hash) AS n FROM ${STORE_TABLES.links} l
  WHERE l.message_seq IN (SELECT seq FROM agent_messages WHERE session_num = ?)
    AND NOT EXISTS (SELECT 1 FROM ${STORE_TABLES.links} o WHERE o.hash = l.hash
      AND o.message_seq NOT IN (SELECT seq FROM agent_messages WHERE session_num = ?))`;

/** @internal a session's change-log rows: one range of the log's session index (feed/change-log.ts). */
export const ERASE_CHANGES = "DELETE FROM agent_changes WHERE session_id = ? RETURNING 1 AS gone";

/** The erasure's statements on SQLite. */
export const SQLITE_ERASE: EraseStatements = {
  locks: false,
  head: (id) => query("SELECT num FROM agent_session_heads WHERE session_id = ?", [id]),
  row: (id) => query("SELECT updated_at, pinned, owner, source FROM agent_sessions WHERE id = ?", [id]),
  present: (table) => query(TABLE_PRESENT, [table === "vectors" ? "agent_message_vectors" : "agent_changes"]),
  vectors: (num) => query("SELECT count(*) AS n FROM agent_message_vectors WHERE session_num = ?", [num]),
  *freed(_id, num) {
    return countOf(yield query(FREED_PAYLOADS, [num, num]));
  },
  // Counted first: SQLite's DELETE answers no count without RETURNING every row.
  *content(_id, num) {
    const messages = countOf(
      yield query("SELECT count(*) AS n FROM agent_messages WHERE session_num = ?", [num]),
    );
    const compactions = countOf(
      yield query("SELECT count(*) AS n FROM agent_compactions WHERE session_num = ?", [num]),
    );
    yield call((driver) => {
      deleteSessionContent(driver, Number(num));
      return [];
    });
    yield command("DELETE FROM agent_session_heads WHERE num = ?", [num]);
    return { messages, compactions };
  },
  keyed: (id, keys) => call((driver) => [deleteKeyed(driver, id, keys)]),
  changes: (id) => query(ERASE_CHANGES, [id]),
  *facts(id) {
    return yield* forgetSessionFacts(sqliteFacts, id);
  },
  streams: (id) =>
    call((driver) => {
      forgetStream(driver, id);
      return [];
    }),
  session: (id) => query("DELETE FROM agent_sessions WHERE id = ? RETURNING 1 AS gone", [id]),
  gone: (rows: Row[]) => rows.length,
};
