import type { WritePolicyOptions } from "../contract/store.js";
import { SessionError } from "../errors.js";
import type { QueryLimits } from "../search/limits.js";
import type { VectorStoreOptions } from "../search/vectors/types.js";
import { indexChangeLog } from "../sql/change-log/postgres-append-log.js";
import { backfillRecords, recordColumnsSql } from "../sql/context-records/postgres.js";
import { type Executor, sqlState } from "../sql/engines/postgres/client.js";
import { ownerTsvectorSql } from "../sql/engines/postgres/fts.js";
import type { PostgresMigration } from "../sql/engines/postgres/migration.js";
import { migrationLock } from "../sql/engines/postgres/migration-lock.js";
import { quote, type Tables } from "../sql/engines/postgres/tables.js";
import { POSTGRES_FACT_MIGRATIONS } from "../sql/facts/postgres-schema.js";
import { POSTGRES_ROOMS } from "../sql/rooms/postgres.js";
import { retokenizeCjk } from "../sql/search/postgres-retokenize.js";
import type { Keyring } from "../store/crypto/keyring.js";
import type { ChangeLogOptions } from "../store/feed/change-rows.js";

/** Where the tables live (and the write policy every session of the store enforces). */
export interface PostgresStoreOptions extends WritePolicyOptions, VectorStoreOptions {
  /** Schema for the tables (created when missing); default: the connection's `search_path`. */
  schema?: string;
  /** Prefix for every table and index name, e.g. `"myapp_"`. */
  tablePrefix?: string;
  /**
   * Use named prepared statements on pg connections for the hot statements (default true: parsing and planning
   * the append statement costs more than running it). Set false behind a PgBouncer in transaction mode < 1.21.
   */
  prepare?: boolean;
  /** Bounds on search queries (length, distinct words); see {@link QueryLimits}. */
  queryLimits?: Partial<QueryLimits>;
  /**
   * Keep a change log (`agent_changes`, announced with NOTIFY) so subscribers in other processes see this store's
   * writes and a subscriber can resume from a cursor (docs/FEED.md). Every writing process should enable it.
   */
  changeLog?: boolean | ChangeLogOptions;
  /**
   * Encryption at rest: the content of messages of an owner the keyring has a key for is stored sealed with
   * AES-256-GCM, and erasing the owner destroys its key (docs/PRIVACY.md, "Encryption at rest"). Not with
   * `distributed`.
   */
  keyring?: Keyring;
  /**
   * Create (or convert) the tables distributed on a Citus cluster, through its coordinator: the per-session
   * tables sharded by session id and co-located, so one session's work runs on one node (docs/POSTGRES.md,
   * "Past one server"). Needs the citus extension; tables that are distributed must be opened with it.
   */
  distributed?: boolean;
}

/** One schema step (sql/engines/postgres/migration.ts). */
export type Migration = PostgresMigration;

/**
 * The schema's own steps. Integer `seq` keys give insertion order (latest leaf, search recency); string ids are unique per
 * session. The head row caches the latest leaf's tree columns (depth, totals and its whole skip-pointer chain) so
 * an append after the tip never reads a message row: see append.ts for why that matters under concurrency.
 */
const CORE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: (t) => {
      const ix = (name: string) => quote(t.prefix + name);
      return [
        `CREATE TABLE IF NOT EXISTS ${t.heads} (
          num bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          session_id text NOT NULL UNIQUE,
          version bigint NOT NULL DEFAULT 0,
          leaf_seq bigint,
          leaf_id text,
          leaf_depth integer NOT NULL DEFAULT 0,
          leaf_cum_bytes bigint NOT NULL DEFAULT 0,
          leaf_cum_tokens bigint NOT NULL DEFAULT 0,
          leaf_spine_seq bigint[] NOT NULL DEFAULT '{}',
          leaf_spine_depth integer[] NOT NULL DEFAULT '{}',
          message_count integer NOT NULL DEFAULT 0,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL
        )`,
        `CREATE SEQUENCE IF NOT EXISTS ${t.messagesSeq}`,
        `CREATE TABLE IF NOT EXISTS ${t.messages} (
          seq bigint PRIMARY KEY DEFAULT nextval('${t.messagesSeq.replace(/'/g, "''")}'),
          session_num bigint NOT NULL,
          id text NOT NULL,
          parent_seq bigint,
          role text NOT NULL,
          content text NOT NULL,
          created_at timestamptz NOT NULL,
          depth integer NOT NULL,
          jump_seq bigint,
          jump_depth integer NOT NULL,
          bytes integer NOT NULL,
          cum_bytes bigint NOT NULL,
          tokens integer NOT NULL,
          cum_tokens bigint NOT NULL,
          search tsvector,
          CONSTRAINT ${ix("agent_messages_session_id")} UNIQUE (session_num, id)
        )`,
        `ALTER SEQUENCE ${t.messagesSeq} OWNED BY ${t.messages}.seq`,
        `CREATE INDEX IF NOT EXISTS ${ix("agent_messages_parent")} ON ${t.messages} (parent_seq)`,
        `CREATE INDEX IF NOT EXISTS ${ix("agent_messages_search")} ON ${t.messages} USING gin (search)`,
        `CREATE TABLE IF NOT EXISTS ${t.compactions} (
          seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          session_num bigint NOT NULL,
          id text NOT NULL UNIQUE,
          summary text NOT NULL,
          from_message_id text NOT NULL,
          to_message_id text NOT NULL,
          details text,
          created_at timestamptz NOT NULL
        )`,
        `CREATE INDEX IF NOT EXISTS ${ix("agent_compactions_session")} ON ${t.compactions} (session_num, seq)`,
        `CREATE TABLE IF NOT EXISTS ${t.blocks} (
          key text PRIMARY KEY,
          content text NOT NULL,
          updated_at timestamptz NOT NULL DEFAULT now()
        )`,
        `CREATE TABLE IF NOT EXISTS ${t.entries} (
          label text NOT NULL,
          key text NOT NULL,
          content text NOT NULL,
          search tsvector,
          seq bigint GENERATED BY DEFAULT AS IDENTITY,
          created_at timestamptz NOT NULL DEFAULT now(),
          updated_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (label, key)
        )`,
        `CREATE INDEX IF NOT EXISTS ${ix("agent_search_entries_search")} ON ${t.entries} USING gin (search)`,
      ];
    },
  },
  // The session registry of SessionManager (registry.ts). `activity` is a store-wide write counter drawn from a
  // sequence: it orders rows written within the same millisecond, so list() is "newest activity first" and
  // stable; the index has list()'s exact order, so `list({ limit })` reads `limit` index entries and no sort.
  {
    version: 2,
    statements: (t) => {
      const ix = (name: string) => quote(t.prefix + name);
      return [
        `CREATE SEQUENCE IF NOT EXISTS ${t.sessionsActivity}`,
        `CREATE TABLE IF NOT EXISTS ${t.sessions} (
          id text PRIMARY KEY,
          name text NOT NULL,
          parent_session_id text,
          model text,
          source text,
          input_tokens bigint NOT NULL DEFAULT 0,
          output_tokens bigint NOT NULL DEFAULT 0,
          cache_read_tokens bigint NOT NULL DEFAULT 0,
          cache_write_tokens bigint NOT NULL DEFAULT 0,
          estimated_cost double precision NOT NULL DEFAULT 0,
          end_reason text,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          activity bigint NOT NULL DEFAULT nextval('${t.sessionsActivity.replace(/'/g, "''")}')
        )`,
        `ALTER SEQUENCE ${t.sessionsActivity} OWNED BY ${t.sessions}.activity`,
        `CREATE INDEX IF NOT EXISTS ${ix("agent_sessions_recent")} ON ${t.sessions} (updated_at DESC, activity DESC)`,
      ];
    },
  },
  // Free text Postgres cannot hold as is (U+0000, lone surrogates) is stored as a JSON string literal and flagged,
  // so it reads back exactly (text.ts): block and entry content, compaction summaries.
  {
    version: 3,
    statements: (t) => [
      `ALTER TABLE ${t.blocks} ADD COLUMN IF NOT EXISTS content_json boolean NOT NULL DEFAULT false`,
      `ALTER TABLE ${t.entries} ADD COLUMN IF NOT EXISTS content_json boolean NOT NULL DEFAULT false`,
      `ALTER TABLE ${t.compactions} ADD COLUMN IF NOT EXISTS summary_json boolean NOT NULL DEFAULT false`,
    ],
  },
  // Keyset pages of the transfer (transfer.ts) in storage order and UTF-8 byte order (`COLLATE "C"`, which keys
  // of another collation cannot serve): without these, every page would sort the whole session or table again.
  {
    version: 4,
    statements: (t) => [
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_messages_session_seq`)} ON ${t.messages} (session_num, seq)`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_search_entries_seq`)} ON ${t.entries} (seq)`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_context_blocks_key_c`)} ON ${t.blocks} (key COLLATE "C")`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_session_heads_id_c`)} ON ${t.heads} (session_id COLLATE "C")`,
    ],
  },
  // The SHA-256 of a message's stored JSON, so an update of identical content writes nothing without reading the
  // content back (NULL for rows stored before this step: their first update writes). Postgres has no value limit
  // below 1 GB, so messages are never split here (see the SQLite store's continuation rows).
  {
    version: 5,
    statements: (t) => [`ALTER TABLE ${t.messages} ADD COLUMN IF NOT EXISTS content_hash text`],
  },
  // Offloaded media payloads (attachments.ts): each stored once; one link row per (message row, payload), whose
  // count is the payload's reference count. Version 5 is large messages.
  {
    version: 6,
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.attachments} (hash text PRIMARY KEY, data bytea NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${t.attachmentLinks} (
        message_seq bigint NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (message_seq, hash)
      )`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_attachment_links_hash`)} ON ${t.attachmentLinks} (hash)`,
    ],
  },
  // Adoption of the reference's tables (adopt.ts): one row per adopted source, so it runs once.  (5 is large messages, 6 attachments.)
  {
    version: 7,
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.adoptions} (source text PRIMARY KEY, adopted_at timestamptz NOT NULL, report text NOT NULL)`,
    ],
  },
  // A shorter pending list for the full-text indexes. GIN's `fastupdate` collects new rows in an unsorted list that
  // the insert which fills it (or a vacuum) merges into the index; the list's pages are then free but stay in the
  // file, every search scans the list, and the merge lands on one append. With the default limit (4 MB) an index
  // grown by 10,000 appends measured 1.04x the raw message JSON, with 1 MB 0.61x; appends 3-8 % slower at 100,000
  // messages, the slowest append's merge a quarter the size. 256 kB (0.49x) cost 12-15 % and no list (0.45x) ~20 %,
  // imports 2-3x (docs/PERFORMANCE.md). The list left by earlier writes is merged now, so no search keeps scanning it.
  {
    version: 8,
    statements: (t) => {
      const index = (name: string) => (t.schema ? `${quote(t.schema)}.` : "") + quote(t.prefix + name);
      return ["agent_messages_search", "agent_search_entries_search"].flatMap((name) => [
        `ALTER INDEX ${index(name)} SET (gin_pending_list_limit = 1024)`,
        `SELECT gin_clean_pending_list('${index(name)}'::regclass)`,
      ]);
    },
  },
  // Chinese, Japanese and Korean runs are indexed in character pairs (search/cjk.ts): rows indexed before, one
  // lexeme a run, are indexed again, or a word inside a clause would not find them.
  {
    version: 9,
    statements: () => [],
    run: retokenizeCjk,
  },
  // The sessions of one source in id order (registry scan({ source }): the agent runtime's list()): without it a
  // scan for the few agent sessions of a store walked every conversation's row. The id in the column's collation,
  // the primary key's, so the scan's `ORDER BY id` and `id > $2` are a range of it. A registry update writes one
  // more index entry (it is never HOT: updated_at is indexed already); agent appends measured the same within noise.
  {
    version: 10,
    statements: (t) => [
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_sessions_source`)} ON ${t.sessions} (source, id)`,
    ],
  },
  // The messages without searchable text (an agent's tool steps), by session: ranked recall walks through them
  // (search/text-parents.ts) only in a session (or, across sessions, a store) that holds one, which this answers
  // with one probe, so a conversation without them pays nothing for the walk. Kept by the server on every write;
  // an entry per such message.
  {
    version: 11,
    statements: (t) => [
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_messages_textless`)} ON ${t.messages} (session_num)
        WHERE search IS NULL`,
    ],
  },
  // Whose a session is (store/owner.ts): set when it is registered, never changed. The index holds only owned
  // sessions in list()'s order, so an owner's list is one range of it and other owners' rows are never read; a
  // store without owners pays nothing for it (a NULL owner has no entry).
  {
    version: 12,
    statements: (t) => [
      `ALTER TABLE ${t.sessions} ADD COLUMN IF NOT EXISTS owner text`,
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_sessions_owner`)}
        ON ${t.sessions} (owner, updated_at DESC, activity DESC) WHERE owner IS NOT NULL`,
    ],
  },
  // A pinned session is exempt from retention (store/retention.ts); false for every row there was.
  {
    version: 13,
    statements: (t) => [
      `ALTER TABLE ${t.sessions} ADD COLUMN IF NOT EXISTS pinned boolean NOT NULL DEFAULT false`,
    ],
  },
  // A session's roots (getSiblings of a root: an edit of the first message makes a new root), oldest first: only
  // rows without a parent have an entry, so the roots are one range of it however long the session.
  {
    version: 14,
    statements: (t) => [
      `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_messages_roots`)} ON ${t.messages} (session_num, seq)
        WHERE parent_seq IS NULL`,
    ],
  },
  // The change log's rows by session (feed/append-log.ts), for a log made before this step.
  { version: 15, statements: () => [], run: indexChangeLog },
  // An owned session's messages hold the owner lexeme beside the session's (sql/engines/postgres/fts.ts), so an owner's search is
  // one lexeme inside the GIN index; the rows written before it take it here, once.
  {
    version: 16,
    statements: (t) => [
      `UPDATE ${t.messages} m SET search = m.search || ${ownerTsvectorSql("s.owner")}
        FROM ${t.heads} h JOIN ${t.sessions} s ON s.id = h.session_id
        WHERE h.num = m.session_num AND s.owner IS NOT NULL AND m.search IS NOT NULL`,
    ],
  },
  // A streaming answer's chunks, kept while it runs so a reloaded page rejoins it (ai-sdk/resumable.ts).
  { version: 17, statements: streamTables },
  // Encryption at rest (sql/sealing/postgres.ts): a keyed check of each encrypted owner's key, under a hash of the owner
  // id (never the id, never the key), so a wrong key is refused before anything is written or read as garbage.
  {
    version: 18,
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.ownerKeys} (owner_hash text PRIMARY KEY, key_check text NOT NULL)`,
    ],
  },
  // Key rotation (sql/rekey-hooks/postgres.ts): beside the owner's key check (then the new key's), the check of the key its
  // rows move from and the cursor of the walk, the last session (head num) and message id re-sealed.
  {
    version: 19,
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.ownerRekeys} (owner_hash text PRIMARY KEY, from_check text NOT NULL,
        session_num bigint NOT NULL DEFAULT 0, message_id text)`,
    ],
  },
  // Sealed context blocks and search entries (sealed-context.ts): a block's flag, an entry's length in clear (its
  // content column holds the ciphertext, and the entry ranking reads lengths). NULL / false: stored in clear.
  {
    version: 20,
    statements: (t) => [
      `ALTER TABLE ${t.blocks} ADD COLUMN IF NOT EXISTS sealed boolean NOT NULL DEFAULT false`,
      `ALTER TABLE ${t.entries} ADD COLUMN IF NOT EXISTS sealed_chars integer`,
    ],
  },
  // A message's search vector stays in its row (compressed first, out of line only when the row would not fit a
  // page), and its content goes out of line before it: every search evaluates the vectors of its candidates, and an
  // encrypted owner's blind tokens (search/blind-tokens.ts), ~2× a word's bytes and incompressible, went to TOAST
  // from a ~40-word message on (docs/PRIVACY.md, "Measured"). Rows written before keep their place (no rewrite).
  // Not on a distributed store: its shards keep the storage they were created with.
  {
    version: 21,
    statements: (t) => t.layout.searchStorage(t.messages),
  },
  // Whose a block or entry is, by record (sql/context-records/): the session or the owner its write named; rows
  // stored before are given one where the old suffix rule is unambiguous (context/legacy-records.ts).
  { version: 22, statements: recordColumnsSql, run: backfillRecords },
  // 23–25 and 28: the facts' (sql/facts/postgres-schema.ts); 26 and 27: the storage rooms' (a LangGraph thread's
  // checkpoints, a LangGraph store's items: src/sql/rooms/).
];

/** The schema: its own steps, the facts' and the storage rooms' (src/sql/rooms/postgres.ts), in version order. */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  ...CORE_MIGRATIONS,
  ...POSTGRES_FACT_MIGRATIONS,
  ...POSTGRES_ROOMS.flatMap((room) => room.migrations),
].sort((a, b) => a.version - b.version);

/** Migration 17: a session's kept stream (one row per session) and its chunks, in order. */
function streamTables(t: Tables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t.streams} (
      session_id text PRIMARY KEY,
      stream_id text NOT NULL,
      state text NOT NULL,
      error text,
      updated_at bigint NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_streams_updated`)} ON ${t.streams} (updated_at)`,
    `CREATE TABLE IF NOT EXISTS ${t.streamChunks} (
      session_id text NOT NULL,
      stream_id text NOT NULL,
      seq integer NOT NULL,
      chunk text NOT NULL,
      PRIMARY KEY (session_id, stream_id, seq)
    )`,
  ];
}

/** The newest schema version this code knows. */
export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The tables' schema version, read without creating anything; 0 when there are no agent-session tables. */
export async function schemaVersion(executor: Executor, t: Tables): Promise<number> {
  const [found] = await executor.query<{ present: boolean }>(
    "SELECT to_regclass($1) IS NOT NULL AS present",
    [t.version],
  );
  if (!found?.present) return 0;
  const [row] = await executor.query<{ version: number }>(`SELECT version FROM ${t.version} WHERE id = 1`);
  return row ? Number(row.version) : 0;
}

/**
 * Brings the tables to the newest version; idempotent and safe when several processes start at once: the steps
 * run in one transaction holding a transaction-scoped advisory lock, and the version is re-read under the lock
 * (concurrent `CREATE … IF NOT EXISTS` alone can still fail on the catalog's unique indexes).
 */
export async function migrate(
  executor: Executor,
  t: Tables,
  migrations: readonly Migration[] = POSTGRES_MIGRATIONS,
): Promise<number> {
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const found = await schemaVersion(executor, t);
  if (found >= latest) return latest;
  try {
    return await migrateUnderLock(executor, t, migrations);
  } catch (error) {
    const state = sqlState(error);
    // 42501: the role may not change the tables; 25006: a read-only transaction (as on a read replica).
    if (state !== "42501" && state !== "25006") throw error;
    const what =
      found === 0
        ? "There are no agent-session tables here and this connection may not create them"
        : `These Postgres tables have schema version ${found} and this release needs ${latest}`;
    throw new SessionError(
      "READONLY",
      `${what}: open the store once with a role that may change them, on the primary, which creates or migrates ` +
        "them; this connection cannot",
      { cause: error },
    );
  }
}

// The steps in one transaction under an advisory lock; the version is re-read under it (see migrate).
function migrateUnderLock(executor: Executor, t: Tables, migrations: readonly Migration[]): Promise<number> {
  return executor.transaction(async (query) => {
    await migrationLock(query, t);
    // Only when missing: CREATE SCHEMA checks the database-level CREATE privilege even with IF NOT EXISTS, which a
    // role owning just a schema an administrator created for it does not have.
    if (t.schema) {
      const [found] = await query<{ present: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present",
        [t.schema],
      );
      if (!found?.present) await query(`CREATE SCHEMA IF NOT EXISTS ${quote(t.schema)}`);
    }
    await query(
      `CREATE TABLE IF NOT EXISTS ${t.version} (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)`,
    );
    const [row] = await query<{ version: number }>(`SELECT version FROM ${t.version} WHERE id = 1`);
    let version = row ? Number(row.version) : 0;
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= version) continue;
      for (const statement of migration.statements(t)) await query(statement);
      await migration.run?.(query, t);
      version = migration.version;
    }
    await query(
      `INSERT INTO ${t.version} (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version`,
      [version],
    );
    return version;
  });
}
