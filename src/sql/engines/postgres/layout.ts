/**
 * How a store's tables are laid out, and what of its statements that shapes (docs/POSTGRES.md, "One layout object"): the
 * single-node layout here, or the Citus one (citus/layout.ts), which shards the per-session tables by session id so
 * that a statement naming its session runs on one node. A store's {@link Tables} carry the layout chosen once when
 * they are made (`layout`), and every statement takes what differs from it: its route clauses, its key lists, the
 * parameters that name a session, whether a read across sessions fans out, whether a write in clear is guarded.
 * No module but the two layouts' asks which layout it runs on.
 *
 * The ground floor holds the interface and the single-node layout, so a single-node store runs no Citus code; the
 * Citus layout sits in citus/ (the middle floor, beside the conversion and the routed append it calls), loaded and
 * set on the tables only by a store opened with `distributed: true` (store.ts): no other module imports from citus/.
 * What only a cluster runs beyond statement shapes (the routed append, the shard grouping, the workers' purge steps,
 * the conversion on open) are the Citus layout's steps (citus-steps.ts), asked where a member here leads to them;
 * the open's catalog check (layout-check.ts) runs on every store, since it refuses single-node statements on tables
 * that are distributed.
 */

/** A route clause of a table reference: ` AND <alias>.session_id = …` in the Citus layout (see {@link Layout}). */
export type Scope = (alias: string | null) => string;

/** A read of a session's message by its id (null: not found). */
export type MessageRead<M> = (sessionId: string, id: string) => Promise<M | null>;

/** The statement shapes in which the single-node and Citus layouts differ. */
export interface Layout {
  /** The layout's name in messages and tests; never branched on outside the layouts. */
  readonly name: "single-node" | "citus";

  // Route clauses: every reference to a per-session table names its session in the Citus layout, so Citus routes
  // the statement to the one shard holding it (recursive walks and modifying CTEs run only there).

  /** ` AND <alias>.session_id = <session>` (alias null: the column unqualified), or nothing. */
  onSession(alias: string | null, session: string): string;
  /** ` AND <alias>.<column> = ANY(<sessions>)` (a text[] expression; column `session_id` unless named), or nothing. */
  onSessions(alias: string | null, sessions: string, column?: string): string;
  /** The walk {@link Scope} of the session `session` (an SQL expression): {@link onSession} at each alias. */
  scope(session: string): Scope;
  /**
   * The walk {@link Scope} of the sessions `sessions` (an SQL text[] expression): Citus routes a statement so scoped
   * to one shard when they all lie on it (citus/shards.ts groups them so).
   */
  sessionsScope(sessions: string): Scope;
  /** The session column and its value of an INSERT (`, session_id` / `, <value>`), or none. */
  sessionColumn(value: string): { column: string; value: string };
  /** The parameters a statement takes only to name its session(s): `values`, or none. */
  routeParams<T>(...values: T[]): T[];
  /** A key's column list (`columns`), led by `session_id` where the tables are keyed by it. */
  sessionKey(columns: string): string;
  /** The join condition `on` of the rows `a` and `b` of one session, on the session id too where that co-locates. */
  joinOnSession(a: string, b: string, on: string): string;

  // Statement shapes.

  /**
   * Whether the messages and the vectors carry `session_id` and are found by it: a read joins or filters them on
   * it, not on the heads' session number (a join the Citus layout cannot route).
   */
  readonly rowsCarrySession: boolean;
  /**
   * Whether a statement over the per-session tables must stay on one shard: a read across sessions then goes shard
   * by shard (or session by session), and one that needs a whole-table answer takes another shape.
   */
  readonly readsPerShard: boolean;
  /**
   * Whether a table made after the tables were converted (the vectors, made by a store's first embedder) is sharded
   * when it is made (Citus: search/vectors-citus.ts), and made before the store's first write for that.
   */
  readonly shardsNewTables: boolean;
  /**
   * Whether a write's key guard (owner-guard.ts) can sit inside its statement for every row, and a write in clear
   * carries one (sealing.ts ClearGuard). Citus: a row off its session's shard is guarded by a statement before it,
   * in its transaction, and a write in clear carries none.
   */
  readonly guardsInside: boolean;
  /**
   * Whether each CTE of a statement runs as a statement of its own, seeing the rows an earlier CTE wrote (Citus's
   * modifying CTEs), so a statement that inserts and then reads guards the read.
   */
  readonly ctesRunApart: boolean;
  /**
   * Whether a statement whose `WITH` holds an `INSERT` runs as one statement where its rows are. Citus never routes
   * one (multi_router_planner.c, ErrorIfQueryHasUnroutableModifyingCTE): each CTE would be a subplan through the
   * coordinator, so a write routed by its session there sends its `INSERT` as a statement of its own.
   */
  readonly insertsInCtes: boolean;
  /** `call`, a `void` function's call in a select list, as a value the layout can return (Citus: as text). */
  voidValue(call: string): string;
  /** `nextval` for an UPDATE's SET (Citus: a sub-query, evaluated on the coordinator). */
  updateNextval(nextval: string): string;
  /** Whether a write's RETURNING may format its columns (Citus refuses what is not IMMUTABLE there: an outer SELECT). */
  readonly formatsInReturning: boolean;
  /**
   * Whether an append is one call routed to its session's node, the parent read before it (citus/append-path.ts),
   * rather than the one statement that walks the parent's spine (append.ts).
   */
  readonly routedAppend: boolean;
  /** Whether rows live in shard placements on worker nodes, whose snapshots and statistics a purge sees to as well. */
  readonly placesOnWorkers: boolean;
  /** The statements the search column's storage change runs (none on Citus: shards keep what they were made with). */
  searchStorage(messages: string): string[];
  /**
   * A reader of a just-notified message made to wait for the write's commit to settle on every node (Citus's
   * two-phase commit: citus/settled-read.ts); the read as it is on one server.
   */
  settled<M>(read: MessageRead<M>): MessageRead<M>;
}

/** The route clause of every alias on one server: none. */
const unscoped: Scope = () => "";

/** The single-node layout: one server, no route clauses, every statement in its one-server shape. */
export const singleNode: Layout = {
  name: "single-node",
  onSession: () => "",
  onSessions: () => "",
  scope: () => unscoped,
  sessionsScope: () => unscoped,
  sessionColumn: () => ({ column: "", value: "" }),
  routeParams: () => [],
  sessionKey: (columns) => columns,
  joinOnSession: (_a, _b, on) => on,
  rowsCarrySession: false,
  readsPerShard: false,
  shardsNewTables: false,
  guardsInside: true,
  ctesRunApart: false,
  insertsInCtes: true,
  voidValue: (call) => call,
  updateNextval: (nextval) => nextval,
  formatsInReturning: true,
  routedAppend: false,
  placesOnWorkers: false,
  searchStorage: (messages) => [`ALTER TABLE ${messages} ALTER COLUMN search SET STORAGE MAIN`],
  settled: (read) => read,
};
