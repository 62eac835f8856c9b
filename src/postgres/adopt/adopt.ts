/**
 * Adopts what the reference (agents@0.22) wrote into the same Postgres database — its `assistant_*` and
 * `cf_agents_*` tables on the connection's `search_path`: the program sql/adopt/steps.ts over Postgres' table
 * (sql/adopt/postgres.ts), run inside the store's first `ready()`.
 */

import { postgresAdoption } from "../../sql/adopt/postgres.js";
import { adoption, probe } from "../../sql/adopt/steps.js";
import { type Executor, type PostgresQueryable, sqlState } from "../../sql/engines/postgres/client.js";
import { runProgram } from "../../sql/engines/postgres/program.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import {
  type AdoptionReport,
  type AdoptOptions,
  REFERENCE_TABLES,
  warnAdoption,
  warnIfNotClean,
} from "../../store/adopt/adopt.js";
import { postgresAdoptionWrites } from "./import.js";

/**
 * True when one of the reference's tables is on the connection's `search_path`; reads only, so a caller can look
 * before opening a store (which creates agent-session's tables).
 */
export async function hasReferenceTables(db: PostgresQueryable): Promise<boolean> {
  const { rows } = await db.query(
    "SELECT EXISTS (SELECT 1 FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL) AS found",
    [[...REFERENCE_TABLES]],
  );
  return (rows[0] as { found?: unknown } | undefined)?.found === true;
}

/** On the store's first use: adopts the reference's tables once (recorded); null when there was nothing to do. */
export async function adoptOnOpen(executor: Executor, t: Tables): Promise<AdoptionReport | null> {
  const table = postgresAdoption(executor, t, postgresAdoptionWrites(executor, t));
  const query = executor.query.bind(executor);
  const { tables, recorded } = await runProgram(query, probe(table));
  if (tables.length === 0 || recorded) return null;
  let report: AdoptionReport;
  try {
    report = await runProgram(query, adoption(table, tables, {}));
  } catch (error) {
    // A role that may not read the reference's tables (42501) still gets a working store; the owner can adopt.
    if (sqlState(error) !== "42501") throw error;
    warnAdoption(
      `the reference's tables (${tables.join(", ")}) were found but this role may not read them; nothing was adopted (run agent-session adopt as a role that can)`,
    );
    return null;
  }
  warnIfNotClean(report, "<url>");
  return report;
}

/** Adopts the reference's tables now (idempotently), optionally dropping them; null when there are none. */
export async function adoptReference(
  executor: Executor,
  t: Tables,
  options: AdoptOptions = {},
): Promise<AdoptionReport | null> {
  const table = postgresAdoption(executor, t, postgresAdoptionWrites(executor, t));
  const query = executor.query.bind(executor);
  const { tables } = await runProgram(query, probe(table));
  return tables.length === 0 ? null : runProgram(query, adoption(table, tables, options));
}
