/**
 * The Citus layout of a store's statements (sql/engines/postgres/layout.ts; docs/POSTGRES.md, "Past one server"): the
 * per-session tables are sharded by session id and co-located, so every reference to one names its session and
 * Citus routes the statement to the one shard that holds it. The store loads this module (`await import`) and gives
 * this layout to its tables only when opened with `distributed: true`, so a single-node store loads nothing of
 * citus/; the layout carries the steps only Citus runs (../citus-steps.ts), and the open converts the tables to it
 * (open.ts, distribute.ts).
 */

import type { Layout } from "../../sql/engines/postgres/layout.js";
import { carrySteps } from "../citus-steps.js";
import { citusAppend } from "./append-path.js";
import { relayWorkerNotices, shardPlacements } from "./dead-rows.js";
import { openCitus } from "./open.js";
import { parentCtes } from "./parent.js";
import { refreshPlacementStatistics, vacuumWorkerStatistics, workerSnapshots } from "./purge.js";
import { dropLeftPlacementCopies, dropPlacementCopies, placed } from "./reindex.js";
import { settledRead } from "./settled-read.js";
import { byShard } from "./shards.js";

const onSession = (alias: string | null, session: string) =>
  ` AND ${alias ? `${alias}.` : ""}session_id = ${session}`;
const onSessions = (alias: string | null, sessions: string, column = "session_id") =>
  ` AND ${alias ? `${alias}.` : ""}${column} = ANY(${sessions})`;

/** The layout of a store distributed on Citus. */
export const citusLayout: Layout = carrySteps(
  {
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
    insertsInCtes: false,
    voidValue: (call) => `${call}::text`,
    updateNextval: (nextval) => `(SELECT ${nextval})`,
    formatsInReturning: false,
    routedAppend: true,
    placesOnWorkers: true,
    searchStorage: () => [],
    settled: settledRead,
  },
  {
    append: citusAppend,
    parentCtes,
    byShard,
    workerSnapshots,
    refreshPlacements: refreshPlacementStatistics,
    shardNotices: { relay: relayWorkerNotices, placements: shardPlacements },
    vacuumWorkerStatistics,
    placed,
    dropPlacementCopies,
    dropLeftPlacementCopies,
    open: openCitus,
  },
);
