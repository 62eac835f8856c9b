/** SQLite's timed reads (statements.ts): times are ISO-8601 text, which sorts as time. */
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { indexedFirst, TimedMessages } from "./reads.js";
import { type TimedRow, timedStatements } from "./statements.js";

/** The reads' indexes, made by the first read (indexedFirst): a session's messages by time, a message by id. */
export const TIMED_MESSAGE_INDEXES = [
  "CREATE INDEX IF NOT EXISTS agent_messages_time ON agent_messages(session_num, created_at)",
  "CREATE INDEX IF NOT EXISTS agent_messages_id ON agent_messages(id)",
];

/** SQLite's timed reads over the store's connection (each read one snapshot). */
export function sqliteTimedMessages(driver: SqlDriver): TimedMessages {
  const s = timedStatements({
    messages: "agent_messages",
    heads: "agent_session_heads",
    placeholder: () => "?",
    timeCast: "",
    joinHead: "h.num = m.session_num",
  });
  return new TimedMessages(
    () => s,
    indexedFirst(
      async () =>
        driver.transaction(() => {
          for (const sql of TIMED_MESSAGE_INDEXES) driver.run(sql);
        }),
      async (statement) => driver.read(() => driver.all<TimedRow>(statement.sql, statement.params as never)),
    ),
  );
}
