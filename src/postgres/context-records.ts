/**
 * The records of context rows on Postgres (contract/context.ts ContextRecord): the `session_id` and `owner` columns
 * of blocks and entries, added by schema step 22 with their partial indexes and a backfill of the rows stored
 * before (context/legacy-records.ts), and the SQL that keeps, lists and erases by them. On Citus both tables stay
 * sharded by key and label: a row's record is a plain column there, read by statements every shard runs.
 */
import { candidateIds, legacyRecord } from "../context/legacy-records.js";
import { recordColumns } from "../context/records.js";
import type { ContextRecord } from "../contract/context.js";
import type { Query } from "./connection/client.js";

/** The tables the records touch (schema.ts Tables, named here so the schema can import this file). */
interface Tables {
  blocks: string;
  entries: string;
  sessions: string;
  heads: string;
  prefix: string;
}

const quote = (name: string) => `"${name}"`;

/** How many keys the backfill resolves per round. */
const BATCH = 500;

/** An upsert's SET of the record (`tbl`: the target's name): the first recorded write decides it, later ones keep it. */
export const keepRecord = (tbl: string) =>
  `session_id = CASE WHEN ${tbl}.session_id IS NULL AND ${tbl}.owner IS NULL THEN EXCLUDED.session_id ELSE ${tbl}.session_id END,
    owner = CASE WHEN ${tbl}.session_id IS NULL AND ${tbl}.owner IS NULL THEN EXCLUDED.owner ELSE ${tbl}.owner END`;

/** The parameters of {@link RECORDED} (`$1`: the session id, `$2`: the owner, one of them null). */
export function recordParams(record: ContextRecord | undefined): [string | null, string | null] {
  const { sessionId, owner } = recordColumns(record);
  return [sessionId, owner];
}

/** The WHERE of the rows recorded so ({@link recordParams} as `$1`, `$2`). */
export const RECORDED = "(session_id = $1::text OR owner = $2::text)";

// What a removal of session `$1` may take of the rows a list (`$2`) names: unrecorded ones, or its own. A key
// listed by label never removes another session's or an owner's row.
const keyed = (column: string) =>
  `session_id = $1::text OR (${column} = ANY($2::text[]) AND owner IS NULL AND (session_id IS NULL OR session_id = $1::text))`;

/** Deletes session `$1`'s recorded blocks and the unrecorded blocks of keys `$2`, counted. */
export const deleteKeyedBlocksSql = (t: Tables) =>
  `WITH d AS (DELETE FROM ${t.blocks} WHERE ${keyed("key")} RETURNING 1) SELECT count(*) AS n FROM d`;
/** Deletes session `$1`'s recorded entries and the unrecorded ones filed under labels `$2`, counted. */
export const deleteKeyedEntriesSql = (t: Tables) =>
  `WITH d AS (DELETE FROM ${t.entries} WHERE ${keyed("label")} RETURNING 1) SELECT count(*) AS n FROM d`;

/**
 * Deletes every block and entry recorded for session `id` and the unrecorded blocks of `keys` and entries filed
 * under them, in the caller's transaction (one statement per table: on Citus each is sharded by its own column).
 */
export async function deleteKeyed(
  query: Query,
  t: Tables,
  id: string,
  keys: readonly string[],
): Promise<{ blocks: number; entries: number }> {
  const [blocks] = await query<{ n: string }>(deleteKeyedBlocksSql(t), [id, [...keys]]);
  const [entries] = await query<{ n: string }>(deleteKeyedEntriesSql(t), [id, [...keys]]);
  return { blocks: Number(blocks?.n ?? 0), entries: Number(entries?.n ?? 0) };
}

/** Deletes the blocks and entries recorded so, in the caller's transaction; how many of each. */
export async function deleteRecorded(
  query: Query,
  t: Tables,
  record: ContextRecord,
): Promise<{ blocks: number; entries: number }> {
  const params = recordParams(record);
  const count = async (table: string) => {
    const [row] = await query<{ n: string }>(
      `WITH d AS (DELETE FROM ${table} WHERE ${RECORDED} RETURNING 1) SELECT count(*) AS n FROM d`,
      params,
    );
    return Number(row?.n ?? 0);
  };
  return { blocks: await count(t.blocks), entries: await count(t.entries) };
}

/** Schema step 22's statements: the columns and their partial indexes. */
export function recordColumnsSql(t: Tables): string[] {
  return [t.blocks, t.entries].flatMap((table, i) => {
    const base = i === 0 ? "agent_context_blocks" : "agent_search_entries";
    return [
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS session_id text`,
      `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS owner text`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}${base}_session`)} ON ${table} (session_id) WHERE session_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}${base}_owner`)} ON ${table} (owner) WHERE owner IS NOT NULL`,
    ];
  });
}

/** Schema step 22's backfill: the rows stored before are given a record where the old rule is unambiguous. */
export async function backfillRecords(query: Query, t: Tables): Promise<void> {
  await backfill(query, t, t.blocks, "key");
  await backfill(query, t, t.entries, "label");
}

async function backfill(query: Query, t: Tables, table: string, column: string): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const names: string[] = (
      await query<{ name: string }>(
        `SELECT DISTINCT ${column} COLLATE "C" AS name FROM ${table}
         WHERE $1::text IS NULL OR ${column} COLLATE "C" > $1::text ORDER BY 1 LIMIT ${BATCH}`,
        [after],
      )
    ).map((r) => r.name);
    if (names.length === 0) return;
    after = names[names.length - 1]!;
    const { sessions, owners } = await knownIds(query, t, [...new Set(names.flatMap(candidateIds))]);
    for (const name of names) {
      const record = legacyRecord(name, sessions, owners);
      if (!record) continue;
      await query(`UPDATE ${table} SET session_id = $1, owner = $2 WHERE ${column} = $3`, [
        ...recordParams(record),
        name,
      ]);
    }
  }
}

/** Which of `ids` are stored sessions (registered or holding a head), and which are owners of registered ones. */
export async function knownIds(
  query: Query,
  t: Tables,
  ids: readonly string[],
): Promise<{ sessions: Set<string>; owners: Set<string> }> {
  if (ids.length === 0) return { sessions: new Set(), owners: new Set() };
  const sessions = await query<{ id: string }>(
    `SELECT id FROM ${t.sessions} WHERE id = ANY($1::text[])
     UNION SELECT session_id FROM ${t.heads} WHERE session_id = ANY($1::text[])`,
    [ids],
  );
  const owners = await query<{ owner: string }>(
    `SELECT DISTINCT owner FROM ${t.sessions} WHERE owner = ANY($1::text[])`,
    [ids],
  );
  return { sessions: new Set(sessions.map((r) => r.id)), owners: new Set(owners.map((r) => r.owner)) };
}
