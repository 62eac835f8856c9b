/** Postgres's timed reads (statements.ts): times are `timestamptz`, ids `text` compared as bytes. */
import type { Executor } from "../engines/postgres/client.js";
import { migrationLock } from "../engines/postgres/migration-lock.js";
import { quote, type Tables } from "../engines/postgres/tables.js";
import { indexedFirst, type ListPage, type NewSteps, once, TimedMessages } from "./reads.js";
import { type TimedRow, timedStatements } from "./statements.js";

/** The reads' indexes, made by the first read (indexedFirst): a session's messages by time, a message by id. */
export function timedMessageIndexesSql(t: Tables): string[] {
  const ix = (name: string) => quote(t.prefix + name);
  return [
    `CREATE INDEX IF NOT EXISTS ${ix("agent_messages_time")} ON ${t.messages} (session_num, created_at, seq)`,
    `CREATE INDEX IF NOT EXISTS ${ix("agent_messages_id")} ON ${t.messages} (id)`,
  ];
}

/** Postgres's timed reads: one round trip per statement. */
export function postgresTimedMessages(
  ready: () => Promise<Executor>,
  t: Tables,
  messagesOf: TimedMessages["messagesOf"],
  list?: ListPage,
  newSteps?: NewSteps,
): TimedMessages {
  // Read when a statement is made: a Citus store sets its layout after the tables are named.
  const statements = () =>
    timedStatements({
      messages: t.messages,
      heads: t.heads,
      placeholder: (n) => `$${n}`,
      timeCast: "::timestamptz",
      joinHead: t.layout.joinOnSession("h", "m", "h.num = m.session_num"),
      idArray: true,
      // A cluster's rows carry their session and are read by it: the id look-up stays one `= ANY` (a lateral
      // subquery with OFFSET is not one a cluster routes).
      probeIds: !t.layout.rowsCarrySession,
    });
  // Under the lock every layout change holds, so two processes' first reads do not race to create one index.
  const indexed = once(async () =>
    (await ready()).transaction(async (query) => {
      await migrationLock(query, t);
      for (const sql of timedMessageIndexesSql(t)) await query(sql);
    }),
  );
  return new TimedMessages(
    statements,
    indexedFirst(indexed, async (statement) => {
      const executor = await ready();
      return executor.query<TimedRow>(statement.sql, statement.params, statement.prepared === true);
    }),
    messagesOf,
    list,
    indexed,
    newSteps,
  );
}
