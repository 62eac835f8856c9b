/**
 * The sessions, the role and time filters and one session's active path of the vector channel's nearest read on
 * Postgres, as conditions on the vectors `v` and messages `m`: inside the read, so a nearest read with a filter
 * scores the vectors that pass it (filtering the nearest vectors afterwards found nothing for a role or time range
 * they all miss). The parameters are filterParams' (filters.ts): exact, never stricter than passesFilters, and none
 * a row cannot hold.
 */
import type { NearestRead } from "../../search/vectors/types.js";
import type { Tables } from "../schema.js";
import { pathCte } from "../tree.js";
import { filterParams } from "./filters.js";

/** Conditions (each starting with AND) and their parameters, numbered from `$first`. */
export interface NearestWhere {
  sql: string;
  params: unknown[];
}

/** The read's conditions; null when no stored message can pass them. */
export function nearestWhere(t: Tables, read: NearestRead, first: number): NearestWhere | null {
  const ids = read.sessionIds ?? (read.sessionId === undefined ? undefined : [read.sessionId]);
  const filters = filterParams({
    roles: read.roles,
    since: read.since,
    until: read.until,
    sessionIds: ids === undefined ? undefined : new Set(ids),
  });
  if (filters === null) return null;
  let sql = "";
  const params: unknown[] = [];
  const add = (condition: (param: string) => string, value: unknown) => {
    params.push(value);
    sql += ` AND ${condition(`$${first + params.length - 1}`)}`;
  };
  if (filters.sessionIds !== null) {
    add(
      (p) => `v.session_num IN (SELECT num FROM ${t.heads} WHERE session_id = ANY(${p}::text[]))`,
      filters.sessionIds,
    );
  }
  if (filters.roles !== null) add((p) => `m.role = ANY(${p}::text[])`, filters.roles);
  if (filters.since !== null) add((p) => `m.created_at >= ${p}::timestamptz`, filters.since);
  if (filters.until !== null) add((p) => `m.created_at < ${p}::timestamptz`, filters.until);
  // One session's active path (the channel allows it for one session only), walked once from its head's leaf; an
  // id no row can hold made filters null above.
  if (read.activePath && read.sessionId !== undefined) {
    const leaf = (p: string) => `(SELECT leaf_seq FROM ${t.heads} WHERE session_id = ${p}::text)`;
    add(
      (p) => `m.seq IN (WITH RECURSIVE ${pathCte(t.messages, leaf(p))} SELECT seq FROM path)`,
      read.sessionId,
    );
  }
  return { sql, params };
}
