/**
 * SQLite's statements of a session's erasure (steps.ts has the steps). SQLite locks the whole database for the
 * writer, so its reads take no row lock; the content delete and the keyed and stream deletes are the helpers a
 * session's delete and clear run too (sqlite/writes.ts, sql/context-records/sqlite.ts, streams.ts), handed in with the facts'
 * statements by sqlite/registry.ts, which builds the table.
 */

import type { SqlDriver } from "../engines/sqlite/driver.js";
import { call } from "../engines/sqlite/program.js";
import { type FactStatements, forgetSessionFacts } from "../facts/steps.js";
import { command, countOf, query, type Row } from "../program.js";
import { FORGET_SESSION_ROWS } from "../rooms/sqlite.js";
import type { EraseStatements } from "./steps.js";

const TABLE_PRESENT = "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?";

/** @internal a session's change-log rows: one range of the log's session index (feed/change-log.ts). */
export const ERASE_CHANGES = "DELETE FROM agent_changes WHERE session_id = ? RETURNING 1 AS gone";

/** What the erasure runs of the engine's other modules: each the helper a session's delete, clear or drop runs. */
export interface SqliteEraseHelpers {
  /** The payload links' table (sql/media/sqlite-tables.ts). */
  links: string;
  /** Deletes a session's messages with their search rows, vectors and payload links (writes.ts). */
  deleteContent(driver: SqlDriver, num: number): void;
  /** Deletes the blocks and entries recorded for the session and the unrecorded ones of `keys` (sql/context-records/sqlite.ts). */
  deleteKeyed(driver: SqlDriver, id: string, keys: readonly string[]): { blocks: number; entries: number };
  /** Deletes a running answer's stream head and chunks (streams.ts). */
  forgetStream(driver: SqlDriver, id: string): void;
  /** The facts' statements (sql/facts/sqlite.ts). */
  facts: FactStatements;
}

/** The erasure's statements on SQLite, running `h`'s helpers. */
export function sqliteErase(h: SqliteEraseHelpers): EraseStatements {
  // The payloads linked by the session's messages that no message of another session links: what its release frees.
  const freedPayloads = `SELECT count(DISTINCT l.hash) AS n FROM ${h.links} l
  WHERE l.message_seq IN (SELECT seq FROM agent_messages WHERE session_num = ?)
    AND NOT EXISTS (SELECT 1 FROM ${h.links} o WHERE o.hash = l.hash
      AND o.message_seq NOT IN (SELECT seq FROM agent_messages WHERE session_num = ?))`;
  return {
    locks: false,
    head: (id) => query("SELECT num FROM agent_session_heads WHERE session_id = ?", [id]),
    row: (id) => query("SELECT updated_at, pinned, owner, source FROM agent_sessions WHERE id = ?", [id]),
    // One range of agent_sessions_owner, in its order (as list({ owner })).
    newest: (owner, n) =>
      query("SELECT id FROM agent_sessions WHERE owner = ? ORDER BY updated_at DESC, activity DESC LIMIT ?", [
        owner,
        n,
      ]),
    present: (table) =>
      query(TABLE_PRESENT, [table === "vectors" ? "agent_message_vectors" : "agent_changes"]),
    vectors: (num) => query("SELECT count(*) AS n FROM agent_message_vectors WHERE session_num = ?", [num]),
    *freed(_id, num) {
      return countOf(yield query(freedPayloads, [num, num]));
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
        h.deleteContent(driver, Number(num));
        return [];
      });
      yield command("DELETE FROM agent_session_heads WHERE num = ?", [num]);
      return { messages, compactions };
    },
    keyed: (id, keys) => call((driver) => [h.deleteKeyed(driver, id, keys)]),
    changes: (id) => query(ERASE_CHANGES, [id]),
    *facts(id) {
      return yield* forgetSessionFacts(h.facts, id);
    },
    streams: (id) =>
      call((driver) => {
        h.forgetStream(driver, id);
        return [];
      }),
    rooms: (id) => FORGET_SESSION_ROWS.map((sql) => command(sql, [id])),
    session: (id) => query("DELETE FROM agent_sessions WHERE id = ? RETURNING 1 AS gone", [id]),
    gone: (rows: Row[]) => rows.length,
  };
}
