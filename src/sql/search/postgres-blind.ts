/**
 * The keyed blind index on Postgres (search/blind-tokens.ts; SQLite's twin is sql/search/sqlite-blind.ts): which owners'
 * tokens a search matches its terms as. A search kept to a session, an owner or a set of sessions hashes its terms
 * for each owner in scope that has a key, checked against the owner's recorded key first (a wrong or missing key
 * is `DECRYPT_FAILED` before anything is searched). A store-wide search without an owner or sessions hashes for no
 * owner: it would need every owner's key, one set of terms each; it finds text in clear only.
 */
import { assertBlindOwners, type BlindTokens, blindTokensOf } from "../../search/blind-tokens.js";
import type { SearchPlan } from "../../search/options.js";
import type { Query } from "../engines/postgres/client.js";
import { ownerHashSql } from "../engines/postgres/fts.js";
import type { KeyedTables, PostgresKeys } from "../sealing/postgres.js";

type Scope = Pick<SearchPlan, "sessionId" | "sessionIds" | "owner">;

/**
 * The blind tokens of every owner with a key in the search's scope: the session's owner, the owner asked for, or
 * the owners of the sessions named; none for a store-wide search (see above). A known owner's session or an owner
 * whose key this process has verified costs no statement; otherwise one reads the owners and their key checks.
 */
export async function searchBlinds(query: Query, t: KeyedTables, scope: Scope): Promise<BlindTokens[]> {
  const { keys } = t;
  if (!keys) return [];
  const { sessionId, sessionIds, owner } = scope;
  if (sessionId !== undefined)
    return (await keys.run(query, (k) => k.searchKeys(sessionId))).map(blindTokensOf);
  if (owner === undefined && sessionIds === undefined) return [];
  const known = owner === undefined ? undefined : keys.knownSearchKeys(owner);
  if (known !== undefined) return known.map(blindTokensOf);
  const perOwner = await ownersKeys(query, t, keys, owner === undefined ? { sessionIds } : { owner });
  const owners = perOwner.filter((k) => k.length > 0).length;
  assertBlindOwners(owners);
  return perOwner.flat().map(blindTokensOf);
}

// One session of each owner in scope (the keys go by session) with the owner and its key check, in one statement;
// then each owner's search keys, with nothing more to read.
async function ownersKeys(
  query: Query,
  t: KeyedTables,
  keys: PostgresKeys,
  scope: { owner: string } | { sessionIds: ReadonlySet<string> | undefined },
): Promise<Uint8Array[][]> {
  const join = `LEFT JOIN ${t.ownerKeys} k ON k.owner_hash = ${ownerHashSql("s.owner")}
    LEFT JOIN ${t.ownerRekeys} r ON r.owner_hash = k.owner_hash`;
  const rows =
    "owner" in scope
      ? await query<Row>(
          `SELECT s.id, s.owner, k.key_check, r.from_check FROM ${t.sessions} s ${join} WHERE s.owner = $1 LIMIT 1`,
          [scope.owner],
        )
      : await query<Row>(
          `SELECT DISTINCT ON (s.owner) s.id, s.owner, k.key_check, r.from_check FROM ${t.sessions} s ${join}
           WHERE s.id = ANY($1::text[]) AND s.owner IS NOT NULL ORDER BY s.owner, s.id`,
          // An id with a NUL no session can have (Postgres text cannot hold one, nor bind it).
          [[...(scope.sessionIds ?? [])].filter((id) => !id.includes("\u0000"))],
        );
  if (rows.length === 0) return [];
  const seed = {
    owners: rows.map((r): [string, string] => [r.id, r.owner]),
    checks: rows.map((r): [string, string | undefined] => [r.owner, r.key_check ?? undefined]),
    rotations: rows.map((r): [string, string | undefined] => [r.owner, r.from_check ?? undefined]),
  };
  return keys.run(query, (k) => rows.map((r) => k.searchKeys(r.id)), seed);
}

interface Row {
  id: string;
  owner: string;
  key_check: string | null;
  from_check: string | null;
}
