/**
 * The key guard of a context row's write on Postgres (key-guard.ts): a block or entry recorded for a session is
 * sealed under the session's owner as a message of it is (sealed-context.ts, `guarded`), and its upsert requires
 * in the same statement what that relied on (the owner's check still recorded and the session still that owner's,
 * or still in clear), so a session another process deleted and created again under its id for another owner takes
 * no row sealed under the cached owner's key. A refused write writes nothing and is sealed again with the owner read
 * anew (or refused `DECRYPT_FAILED`). A row recorded for an owner, or unrecorded, carries empty guard parameters,
 * which let it through.
 *
 * On a Citus cluster a block or entry lives on the shard of its key, not of its session: the guard is a statement
 * before the upsert (sql/engines/postgres/owner-guard.ts guardInside), which its caller runs in one transaction with it (context-store.ts).
 */
import type { RecordColumns } from "../../context/records.js";
import { keepRecord } from "../context-records/postgres.js";
import type { Query } from "../engines/postgres/client.js";
import { type Guarded, guardInside, guardParams } from "../engines/postgres/owner-guard.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { clusterGuardPasses, refused } from "../sealing/postgres-key-guard.js";
import { keptGuard, storedBlock, storedEntry } from "./postgres-sealed.js";

// What a guarded write's statement answers: rows written, and `keyed` false when its guard refused it.
interface Answer {
  n: number;
  keyed?: boolean | null;
}

/** The answer's columns: the rows `w` wrote and, with a guard, whether it let the write through. */
const answer = (and: string) =>
  `SELECT (SELECT count(*)::integer FROM w) AS n${and ? ", (SELECT keyed FROM gd) AS keyed" : ""}`;

// $1 key, $2 content, $3 content_json, $4 sealed, $5 session id, $6 owner (the record the row keeps, which sealed
// it), the guard's parameters from $7. Over a row recorded otherwise nothing is written (sealed-context.ts
// keptGuard); `absent` writes only a new row (a compare-and-set of a missing key).
const blockSql = (absent: boolean) =>
  statement((t) => {
    const guard = guardInside(t, 7, "$5::text");
    const conflict = absent
      ? "DO NOTHING"
      : `DO UPDATE SET content = EXCLUDED.content, content_json = EXCLUDED.content_json,
      sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at, ${keepRecord("b")}
      WHERE ${keptGuard("b", "$5", "$6")}`;
    return `WITH ${guard.ctes}w AS (
    INSERT INTO ${t.blocks} AS b (key, content, content_json, sealed, updated_at, session_id, owner)
    SELECT $1::text, $2::text, $3::boolean, $4::boolean, now(), $5::text, $6::text WHERE true${guard.and}
    ON CONFLICT (key) ${conflict} RETURNING 1
  ) ${answer(guard.and)}`;
  });

const upsertBlockSql = blockSql(false);
const insertAbsentBlockSql = blockSql(true);

// $1 label, $2 key as stored, $3 content, $4 content_json, $5 sealed_chars, $6 search, $7 session id, $8 owner, $9
// the key as written when it is stored as a digest (else NULL), the guard's from $10. A replaced entry takes a new
// seq (the newest for the bounded ranking window); the time is the column's default taken through EXCLUDED: Citus
// refuses a non-immutable function in DO UPDATE SET. A digest-keyed write replaces the row of its key in clear (sealed
// before digests, or written before its owner had a key) recorded as it keeps or unrecorded (entry-keys.ts): on the
// label's shard, as the write.
const upsertEntrySql = statement((t) => {
  const guard = guardInside(t, 10, "$7::text");
  return `WITH ${guard.ctes}old AS (
    DELETE FROM ${t.entries} AS o WHERE o.label = $1::text AND o.key = $9::text AND (${keptGuard("o", "$7", "$8")})${guard.and}
    RETURNING o.created_at
  ), w AS (
    INSERT INTO ${t.entries} AS e (label, key, content, content_json, sealed_chars, search, session_id, owner, created_at)
    SELECT $1::text, $2::text, $3::text, $4::boolean, $5::integer, $6::tsvector, $7::text, $8::text,
      COALESCE((SELECT min(created_at) FROM old), now())
    WHERE true${guard.and}
    ON CONFLICT (label, key) DO UPDATE SET content = EXCLUDED.content, content_json = EXCLUDED.content_json,
      sealed_chars = EXCLUDED.sealed_chars, search = EXCLUDED.search, seq = EXCLUDED.seq,
      updated_at = EXCLUDED.updated_at, ${keepRecord("e")}
    WHERE ${keptGuard("e", "$7", "$8")} RETURNING 1
  ) ${answer(guard.and)}`;
});

/**
 * Writes block `key` sealed for the record `kept` it keeps, its statement guarded; false when the row holds another
 * record (sealed-context.ts writeSealedRow) or, `absent`, when the key has a row.
 */
export async function writeBlockRow(
  query: Query,
  t: Tables,
  key: string,
  content: string,
  kept: RecordColumns,
  absent = false,
): Promise<boolean> {
  const sql = (absent ? insertAbsentBlockSql : upsertBlockSql)(t);
  return guarded(t, kept.sessionId, `block "${key}"`, async () => {
    const stored = await storedBlock(query, t, key, content, kept, true);
    const params = [key, stored.content, stored.json, stored.sealed, kept.sessionId, kept.owner];
    return { stored, row: await upsert(query, t, kept.sessionId, stored, sql, params) };
  });
}

/**
 * Writes entry `key` of `label` as {@link writeBlockRow} writes a block (the search vector built from the text);
 * `tried` learns each key it is stored under (a digest for an owner with a key, entry-keys.ts).
 */
export async function writeEntryRow(
  query: Query,
  t: Tables,
  label: string,
  key: string,
  content: string,
  kept: RecordColumns,
  tried?: Set<string>,
): Promise<boolean> {
  return guarded(t, kept.sessionId, `entry "${key}" of "${label}"`, async () => {
    const stored = await storedEntry(query, t, label, key, content, kept, true);
    tried?.add(stored.key);
    const params = [label, stored.key, stored.content, stored.json, stored.sealedChars, stored.search];
    const all = [...params, kept.sessionId, kept.owner, stored.key === key ? null : key];
    return { stored, row: await upsert(query, t, kept.sessionId, stored, upsertEntrySql(t), all) };
  });
}

// Runs a write's statement `sql` with its parameters and its guard's: inside it on one server; on a cluster as a
// statement before it (owner-guard.ts guardInside), the write not run when the guard refuses it.
async function upsert(
  query: Query,
  t: Tables,
  sessionId: string | null,
  stored: Guarded,
  sql: string,
  params: unknown[],
): Promise<Answer | undefined> {
  if (t.layout.guardsInside) return (await query<Answer>(sql, [...params, ...guardParams(t, stored)]))[0];
  if (!(await clusterGuardPasses(query, t, sessionId, stored))) return { n: 0, keyed: false };
  return (await query<Answer>(sql, params))[0];
}

// Runs `write` (it seals the row and runs its guarded statement) until its guard lets it through; answers whether a
// row was written. A refusal forgets what the form relied on (key-guard.ts refused): the next try reads the
// session's owner and check again.
async function guarded(
  t: Tables,
  sessionId: string | null,
  what: string,
  write: () => Promise<{ stored: Guarded; row: Answer | undefined }>,
): Promise<boolean> {
  for (let tries = 1; ; tries++) {
    const { stored, row } = await write();
    if (row?.keyed !== false) return Number(row?.n ?? 0) === 1;
    refused(t, sessionId ?? "", stored, tries, what);
  }
}
