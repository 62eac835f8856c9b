/**
 * The Citus layout of a store's statements (connection/layout.ts; docs/POSTGRES.md, "Past one server"): the
 * per-session tables are sharded by session id and co-located, so every reference to one names its session and
 * Citus routes the statement to the one shard that holds it. The store gives this layout to its tables when opened
 * with `distributed: true`; the tables are converted to it by distribute.ts.
 */
import type { Layout } from "../connection/layout.js";
import { settledRead } from "./settled-read.js";

const onSession = (alias: string | null, session: string) =>
  ` AND ${alias ? `${alias}.` : ""}session_id = ${session}`;
const onSessions = (alias: string | null, sessions: string, column = "session_id") =>
  ` AND ${alias ? `${alias}.` : ""}${column} = ANY(${sessions})`;

/** The layout of a store distributed on Citus. */
export const citusLayout: Layout = {
  name: "citus",
  onSession,
  onSessions,
  scope: (session) => (alias) => onSession(alias, session),
  sessionsScope: (sessions) => (alias) => onSessions(alias, sessions),
  sessionColumn: (value) => ({ column: ", session_id", value: `, ${value}` }),
  routeParams: (...values) => values,
  sessionKey: (columns) => `session_id, ${columns}`,
  joinOnSession: (a, b, on) => `${a}.session_id = ${b}.session_id AND ${on}`,
  rowsCarrySession: true,
  readsPerShard: true,
  shardsNewTables: true,
  guardsInside: false,
  ctesRunApart: true,
  voidValue: (call) => `${call}::text`,
  updateNextval: (nextval) => `(SELECT ${nextval})`,
  formatsInReturning: false,
  routedAppend: true,
  placesOnWorkers: true,
  searchStorage: () => [],
  settled: settledRead,
};
