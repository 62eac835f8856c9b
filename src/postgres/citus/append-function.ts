/**
 * The append of the Citus layout as one routed round trip (docs/POSTGRES.md, "Past one server"). Citus never
 * routes a statement whose WITH holds an INSERT (multi_router_planner.c), so append.ts's one statement runs there
 * as ~10 subplans, each a round trip from the coordinator to the worker, committed by two-phase commit. Instead the
 * append is a PL/pgSQL function distributed by its first argument, the session id, and co-located with the heads:
 * the coordinator delegates `SELECT … FROM fn(…)` to the worker that holds the session's shard
 * (function_call_delegation.c), whose statements then run on its local shards, and the transaction is that
 * worker's alone (no two-phase commit).
 *
 * The function locks the head first, so every statement after it reads fresh rows: no "retry" outcome, no
 * fallback. The message seq and the registry's activity order and time are drawn on the coordinator by the caller
 * (a worker draws from a sequence range of its own, which would break insertion order across nodes, and the
 * order of one session once its shard moves) and passed as constants: Citus delegates only calls whose arguments
 * are constants. Delegation also needs workers with Citus metadata (the default since Citus 11), and, inside a
 * transaction block, `force_delegation` (Citus 11+): a logged append runs the call and its change-log row in one
 * transaction (citus/routed-log.ts). Without it the call would run on the coordinator, statement by statement.
 * Forced delegation holds the call to its distribution argument's value: every statement of the function names
 * the session (`$1`).
 *
 * On the worker, Citus 13.2 plans each statement the function sends (`docs/POSTGRES.md`, "Measured"). A static
 * statement names the session as a parameter, so Citus defers its shard pruning to each execution and, from a
 * cached generic plan, deparses, parses and plans the shard query again every call, and its local plan cache keeps
 * every such plan (it misses on its own entries, fixed upstream in citusdata/citus#8824): a worker connection grew
 * ~200 KB an append. Two things avoid both: the function plans every statement afresh (`plan_cache_mode =
 * force_custom_plan`: nothing cached, nothing kept), and the three one-table statements of the common append (lock
 * the head, read the owner, move the head) are dynamic SQL with the session as a literal, which Citus plans on its
 * fast path straight onto the local shard (no deparse and parse). The INSERT stays static: Citus defers every
 * INSERT's pruning whatever its form.
 */

import { SessionError } from "../../errors.js";
import type { Query } from "../../sql/engines/postgres/client.js";
import { ownerHashSql, ownerTsvectorSql } from "../../sql/engines/postgres/fts.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { childSql } from "../../sql/engines/postgres/tree.js";
import { NOW, usageAssignments, usageFits } from "../../sql/registry/postgres-writes.js";
import type { ClearGuard } from "../../sql/sealing/postgres-key-cache.js";
import { parentRead } from "./parent.js";

// The argument types in order. $1 session, $2 id, $3 parent id, $4 mode, $5 check expected leaf, $6 expected
// leaf, $7 role, $8 content, $9 created_at, $10 bytes, $11 tokens, $12 search vector, $13 content hash (as
// append.ts's statement), $14 seq, $15 registry (the agent step), $16 source, $17 owner, $18..$22 the usage
// counters, $23..$32 their bounds, $33 activity, $34 the registry's time, $35 whether the content is in clear
// under a clear guard (key-guard.ts: a session this process found in clear) and $36 the owner's hash it found.
const ARGUMENTS = [
  ...["text", "text", "text", "text", "boolean", "text", "text", "text", "timestamptz", "integer", "integer"],
  ...["tsvector", "text", "bigint", "boolean", "text", "text"],
  ...["bigint", "bigint", "bigint", "bigint", "float8"],
  ...["bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "bigint", "float8", "float8"],
  ...["bigint", "timestamptz"],
  ...["boolean", "text"],
];

/** How many arguments the function takes past append.ts's statement parameters (the seq to the registry's time). */
export const ROUTED_EXTRA = ARGUMENTS.length - 13;

/**
 * The function's name. Versioned: a release that changes its body, arguments or distribution creates a new name, so
 * stores opened by an older release keep theirs until every process has moved (v3: forced delegation; v4: no cached
 * plans, and the common append's one-table statements as dynamic SQL; v5: the clear guard).
 */
function functionName(t: Tables): string {
  const quote = (name: string) => `"${name}"`;
  return (t.schema ? `${quote(t.schema)}.` : "") + quote(`${t.prefix}agent_append_v5`);
}

/** The function's signature as `regprocedure` reads it. */
export function appendSignature(t: Tables): string {
  return `${functionName(t)}(${ARGUMENTS.join(", ")})`;
}

function createSql(t: Tables): string {
  const child = childSql({
    seq: "par_seq",
    depth: "par_depth",
    spineSeq: "par_sseq",
    spineDepth: "par_sdep",
  });
  const done = (outcome: string, leaf: string) =>
    `RETURN QUERY SELECT NULL::bigint, ${leaf}, '${outcome}'::text; RETURN;`;
  // Dynamic SQL with the session as a literal (%L): Citus plans it on its fast path onto the local shard. Table
  // names are plain identifiers (schema.ts), so they sit in the dollar-quoted format string as they are.
  const lockHead = `EXECUTE format($q$SELECT x.num, x.leaf_seq, x.leaf_id, x.leaf_depth, x.leaf_cum_bytes,
    x.leaf_cum_tokens, x.leaf_spine_seq, x.leaf_spine_depth FROM ${t.heads} x WHERE x.session_id = %L FOR UPDATE$q$,
    $1) INTO hd;
  GET DIAGNOSTICS found_rows = ROW_COUNT;`;
  return `CREATE OR REPLACE FUNCTION ${appendSignature(t)}
  RETURNS TABLE (r_seq bigint, r_leaf_id text, r_outcome text) LANGUAGE plpgsql
  SET plan_cache_mode = force_custom_plan AS $fn$
DECLARE
  hd record;
  nd record;
  par_seq bigint; par_depth integer; par_bytes bigint; par_tokens bigint; par_sseq bigint[]; par_sdep integer[];
  owner_vec tsvector;
  found_rows bigint;
  own_hash text;
  keyed boolean;
BEGIN
  ${lockHead}
  -- Content in clear a process wrote without looking the owner up: only while the session still has the owner it
  -- found (its hash; NULL: none) and that owner no recorded key check (the key table is a reference table, a copy
  -- on this node), else nothing is written and the caller looks the owner up (key-guard.ts).
  IF $35 THEN
    EXECUTE format($q$SELECT ${ownerHashSql("o.owner")} FROM ${t.sessions} o WHERE o.id = %L$q$, $1) INTO own_hash;
    IF own_hash IS DISTINCT FROM $36 THEN ${done("keyed", "NULL::text")} END IF;
    EXECUTE format($q$SELECT EXISTS (SELECT 1 FROM ${t.ownerKeys} k WHERE k.owner_hash = %L)$q$, own_hash) INTO keyed;
    IF keyed THEN ${done("keyed", "NULL::text")} END IF;
  END IF;
  IF found_rows = 0 THEN
    -- A new session: only an append that could succeed creates its head (as append.ts's statement).
    IF $5 AND $6 IS NOT NULL THEN ${done("conflict", "NULL::text")} END IF;
    IF $4 = 'id' THEN ${done("missing", "NULL::text")} END IF;
    INSERT INTO ${t.heads} AS x (session_id, created_at, updated_at) VALUES ($1, $9, $9)
      ON CONFLICT (session_id) DO NOTHING;
    ${lockHead}
  END IF;
  -- After the tip with no leaf to check (the common append), a duplicate id can be the only refusal: the INSERT's
  -- ON CONFLICT finds it, one routed statement fewer (each costs the worker a plan). Otherwise it comes first, as
  -- in append.ts's statement, ahead of "conflict" and "missing".
  IF NOT ($4 = 'leaf' AND hd.leaf_seq IS NOT NULL AND NOT ($5 AND hd.leaf_id IS DISTINCT FROM $6)) THEN
    PERFORM 1 FROM ${t.messages} m WHERE m.session_num = hd.num AND m.id = $2 AND m.session_id = $1;
    IF FOUND THEN ${done("duplicate", "hd.leaf_id")} END IF;
  END IF;
  IF $5 AND hd.leaf_id IS DISTINCT FROM $6 THEN ${done("conflict", "hd.leaf_id")} END IF;
  IF hd.leaf_seq IS NOT NULL AND ($4 = 'leaf' OR ($4 = 'id' AND hd.leaf_id = $3)) THEN
    par_seq := hd.leaf_seq; par_depth := hd.leaf_depth; par_bytes := hd.leaf_cum_bytes;
    par_tokens := hd.leaf_cum_tokens; par_sseq := hd.leaf_spine_seq; par_sdep := hd.leaf_spine_depth;
  ELSIF $4 = 'id' THEN
    ${parentRead(t, "$1", "$3", " INTO par_seq, par_depth, par_bytes, par_tokens, par_sseq, par_sdep")};
    IF NOT FOUND THEN ${done("missing", "hd.leaf_id")} END IF;
  END IF;
  SELECT ${child.depth} AS depth, ${child.jumpSeq} AS jump_seq, ${child.jumpDepth} AS jump_depth,
    ${child.spineSeq} AS sseq, ${child.spineDepth} AS sdep INTO nd;
  -- Citus refuses a subquery in an INSERT's VALUES: the owner lexeme (sql/engines/postgres/fts.ts) is read first.
  EXECUTE format($q$SELECT ${ownerTsvectorSql("o.owner")} FROM ${t.sessions} o WHERE o.id = %L$q$, $1) INTO owner_vec;
  INSERT INTO ${t.messages} (seq, session_num, id, parent_seq, role, content, created_at, depth, jump_seq,
    jump_depth, bytes, cum_bytes, tokens, cum_tokens, search, content_hash, session_id)
  VALUES ($14, hd.num, $2, par_seq, $7, $8, $9, nd.depth, nd.jump_seq, nd.jump_depth, $10,
    COALESCE(par_bytes, 0) + $10, $11, COALESCE(par_tokens, 0) + $11, $12 || COALESCE(owner_vec, ''::tsvector), $13, $1)
  ON CONFLICT (session_id, session_num, id) DO NOTHING;
  -- The head is locked, so no other append of this session is in flight: a row skipped is one committed before.
  IF NOT FOUND THEN ${done("duplicate", "hd.leaf_id")} END IF;
  EXECUTE format($q$UPDATE ${t.heads} x SET version = x.version + 1, leaf_seq = $1, leaf_id = $2, leaf_depth = $3,
    leaf_cum_bytes = COALESCE($4, 0) + $5, leaf_cum_tokens = COALESCE($6, 0) + $7, leaf_spine_seq = $8,
    leaf_spine_depth = $9, message_count = x.message_count + 1, updated_at = $10 WHERE x.session_id = %L$q$, $1)
    USING $14, $2, nd.depth, par_bytes, $10, par_tokens, $11, nd.sseq, nd.sdep, $9;
  IF $15 THEN
    UPDATE ${t.sessions} SET ${usageAssignments(18)}, updated_at = $34, activity = $33
    WHERE id = $1 AND ($16 IS NULL OR source = $16) AND ($17 IS NULL OR owner = $17) AND ${usageFits(23)};
    -- As the single-node statement's division by the rows updated: the message does not stay (append.ts).
    IF NOT FOUND THEN RAISE EXCEPTION 'no registry row for the step' USING ERRCODE = 'division_by_zero'; END IF;
  END IF;
  RETURN QUERY SELECT $14, hd.leaf_id, 'ok'::text;
END
$fn$`;
}

/**
 * Creates the append function and distributes it by the session, co-located with the heads (the tables are
 * distributed already). Runs in the caller's transaction, under the migration lock.
 */
export async function createAppendFunction(query: Query, t: Tables): Promise<void> {
  await query(createSql(t));
  const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
  await query(
    `SELECT create_distributed_function(${literal(appendSignature(t))}, '$1', colocate_with => ${literal(t.heads)},
      force_delegation => true)`,
  );
}

/** Whether the store's append function exists (a store distributed by a release without it has none). */
export async function hasAppendFunction(query: Query, t: Tables): Promise<boolean> {
  const [row] = await query<{ present: boolean }>("SELECT to_regprocedure($1) IS NOT NULL AS present", [
    appendSignature(t),
  ]);
  return row?.present === true;
}

/**
 * The coordinator's draw before a routed append: the message seq, and for the agent step the registry's activity
 * order and time (NULL otherwise), as text.
 */
function drawSql(t: Tables, registry: boolean): string {
  const next = (sequence: string) => `nextval('${sequence.replace(/'/g, "''")}')::text`;
  return `SELECT ${next(t.messagesSeq)} AS seq, ${registry ? next(t.sessionsActivity) : "NULL"} AS activity, ${
    registry ? NOW : "NULL::timestamptz"
  } AS now`;
}

/** The delegated call: every argument a parameter, cast to its type, read as append.ts's statement reads. */
function callSql(t: Tables): string {
  const args = ARGUMENTS.map((type, i) => `$${i + 1}::${type}`).join(", ");
  return `SELECT r_seq::text AS seq, r_leaf_id AS leaf_id, r_outcome AS outcome FROM ${functionName(t)}(${args})`;
}

/**
 * The delegated call and its arguments for append.ts's statement parameters `params` (13, plus the registry's 17
 * for the agent step), drawn afresh on each attempt: a retried append takes a new seq. The function answers fresh
 * (it locks the head first), so only a transient failure retries it.
 */
export function routedCall(
  t: Tables,
  params: readonly unknown[],
  registry: boolean,
  clear?: ClearGuard,
): (query: Query) => Promise<[string, unknown[]]> {
  return async (query) => {
    const [draw] = await query<{ seq: string; activity: string | null; now: Date | null }>(
      drawSql(t, registry),
      [],
      true,
    );
    if (!draw) throw new SessionError("STORAGE", "The coordinator drew no message seq");
    const counters = registry ? params.slice(13, 30) : new Array<null>(17).fill(null);
    const guard = [clear !== undefined, clear?.ownerHash ?? null];
    return [
      callSql(t),
      [...params.slice(0, 13), draw.seq, registry, ...counters, draw.activity, draw.now, ...guard],
    ];
  };
}
