/**
 * The Citus layout of a store's tables (docs/POSTGRES.md, "Past one server"). Citus shards a table by one
 * column and requires every primary key and unique constraint to contain it, so the per-session tables (heads,
 * messages, overlays, attachment links, the registry) are keyed by the session id and co-located: one session's
 * rows are on one node and a statement that names the session runs there alone (the kept streams too). Blocks,
 * entries and payloads are sharded by their own keys; the version and adoption rows and the change log stay on the
 * coordinator. Which table goes where, and by which column, is the declaration's (sql/owner-data/postgres.ts `citus`,
 * `citusColumn`, placed by placement.ts); the re-keying below prepares the tables of the first distribution for it.
 *
 * The same steps convert a single-node store that holds rows: the new columns are filled from the heads before
 * `create_distributed_table` copies each table into its shards.
 */

import { SessionError } from "../../errors.js";
import type { Query } from "../../sql/engines/postgres/client.js";
import { hasCitus, isDistributed } from "../../sql/engines/postgres/layout-check.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { vectorTables } from "../../sql/vectors/postgres-schema.js";
import { placeDeclared } from "./placement.js";

/** The primary key and unique constraints of `table` (names made by Postgres, so looked up rather than guessed). */
async function keyConstraints(query: Query, table: string): Promise<string[]> {
  const rows = await query<{ name: string }>(
    "SELECT conname AS name FROM pg_constraint WHERE conrelid = $1::regclass AND contype IN ('p', 'u')",
    [table],
  );
  return rows.map((r) => r.name);
}

/** Replaces every key of `table` by `keys` (column lists; the first is the primary key). */
async function rekey(query: Query, table: string, keys: string[]): Promise<void> {
  const drops = (await keyConstraints(query, table)).map((name) => `DROP CONSTRAINT "${name}"`);
  const [primary, ...unique] = keys;
  const adds = [`ADD PRIMARY KEY (${primary})`, ...unique.map((columns) => `ADD UNIQUE (${columns})`)];
  await query(`ALTER TABLE ${table} ${[...drops, ...adds].join(", ")}`);
}

/** Adds `session_id` to `table`, filled by `fill` (an UPDATE's SET … FROM … WHERE tail), then NOT NULL. */
async function addSessionId(query: Query, table: string, fill: string): Promise<void> {
  await query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS session_id text`);
  await query(`UPDATE ${table} x SET session_id = ${fill}`);
  await query(`ALTER TABLE ${table} ALTER COLUMN session_id SET NOT NULL`);
}

/**
 * Converts the store's (migrated) tables to the Citus layout and distributes them; when they are distributed
 * already, places only the declared tables that are not (placement.ts). Runs in the caller's transaction, under
 * the migration lock.
 */
export async function distribute(query: Query, t: Tables): Promise<void> {
  if (!(await hasCitus(query))) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "distributed: true needs the citus extension on this database (open the store on the Citus coordinator)",
      { issues: [{ path: "distributed", rule: "invalid" }] },
    );
  }
  // Distributed already: only the declared tables a later migration added are left to place (placement.ts).
  if (await isDistributed(query, t)) return placeDeclared(query, t);
  // A store with vectors (search/vectors-schema.ts): their reference to the messages' seq goes before that key does.
  const vectors = await existing(query, vectorTables(t).vectors);
  if (vectors) await dropReferences(query, vectors);
  await rekey(query, t.heads, ["session_id"]);
  await addSessionId(query, t.messages, `h.session_id FROM ${t.heads} h WHERE h.num = x.session_num`);
  // The (session, id) key keeps its name: appends and transfers rely on its unique violation, not on its name.
  await rekey(query, t.messages, ["session_id, seq", "session_id, session_num, id"]);
  if (vectors) {
    // Vectors of messages deleted before the reference existed have no session to go to: they were orphans.
    await query(
      `DELETE FROM ${vectors} x WHERE NOT EXISTS (SELECT 1 FROM ${t.messages} m WHERE m.seq = x.seq)`,
    );
    await addSessionId(query, vectors, `m.session_id FROM ${t.messages} m WHERE m.seq = x.seq`);
    await rekey(query, vectors, ["session_id, seq"]);
  }
  await addSessionId(query, t.compactions, `h.session_id FROM ${t.heads} h WHERE h.num = x.session_num`);
  await rekey(query, t.compactions, ["session_id, seq", "session_id, id"]);
  await addSessionId(
    query,
    t.attachmentLinks,
    `m.session_id FROM ${t.messages} m WHERE m.seq = x.message_seq`,
  );
  await rekey(query, t.attachmentLinks, ["session_id, message_seq, hash"]);
  // Every table the declaration places "by-session", "by-key" or "reference" (sql/owner-data/postgres.ts), by its declared
  // column: a table added to the declaration is placed without a line here. Tables made on first use that do not
  // exist yet (the vectors) are distributed when they are made (search/vectors-citus.ts).
  await placeDeclared(query, t);
  if (vectors) {
    // Added once both are distributed: Citus refuses to distribute a table a local one references.
    await query(
      `ALTER TABLE ${vectors} ADD FOREIGN KEY (session_id, seq) REFERENCES ${t.messages} (session_id, seq) ON DELETE CASCADE`,
    );
  }
}

/** `table` when it exists, else null. */
async function existing(query: Query, table: string): Promise<string | null> {
  const [row] = await query<{ found: boolean }>("SELECT to_regclass($1) IS NOT NULL AS found", [table]);
  return row?.found ? table : null;
}

/** Drops the foreign keys of `table` (names made by Postgres, so looked up). */
async function dropReferences(query: Query, table: string): Promise<void> {
  const rows = await query<{ name: string }>(
    "SELECT conname AS name FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f'",
    [table],
  );
  for (const { name } of rows) await query(`ALTER TABLE ${table} DROP CONSTRAINT "${name}"`);
}
