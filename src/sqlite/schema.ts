import { SessionError } from "../errors.js";
import { indexChangeLog } from "../sql/change-log/sqlite.js";
import { addContextRecords } from "../sql/context-records/sqlite.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import type { SqliteMigration } from "../sql/engines/sqlite/migration.js";
import { isReadonlyError } from "../sql/engines/sqlite/readonly.js";
import { SQLITE_FACT_MIGRATIONS } from "../sql/facts/sqlite-schema.js";
import { attachmentTableStatements, STORE_TABLES } from "../sql/media/sqlite-tables.js";
import { REKEY_TABLES } from "../sql/rekey/sqlite-rotation.js";
import { SQLITE_ROOMS } from "../sql/rooms/sqlite.js";
import { retokenizeCjk, retokenizeOwned } from "../sql/search/sqlite-retokenize.js";
import { STREAM_TABLES } from "../sql/streams/sqlite-store.js";

/** One schema step (sql/engines/sqlite/migration.ts). */
export type Migration = SqliteMigration;

/**
 * The schema's own steps, as an append-only list: a released step is never edited, a change is a new step.
 * Integer `seq` keys are insertion order (latest leaf, FTS rowid); string ids are unique per session.
 */
const CORE_MIGRATIONS: Migration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE IF NOT EXISTS agent_session_heads (
        num INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE,
        leaf_seq INTEGER,
        message_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `CREATE TABLE IF NOT EXISTS agent_messages (
        seq INTEGER PRIMARY KEY,
        session_num INTEGER NOT NULL,
        id TEXT NOT NULL,
        parent_seq INTEGER,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        depth INTEGER NOT NULL,
        jump_seq INTEGER,
        jump_depth INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        cum_bytes INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        cum_tokens INTEGER NOT NULL
      )`,
      "CREATE UNIQUE INDEX IF NOT EXISTS agent_messages_session_id ON agent_messages(session_num, id)",
      "CREATE INDEX IF NOT EXISTS agent_messages_parent ON agent_messages(parent_seq)",
      `CREATE TABLE IF NOT EXISTS agent_compactions (
        seq INTEGER PRIMARY KEY,
        session_num INTEGER NOT NULL,
        id TEXT NOT NULL UNIQUE,
        summary TEXT NOT NULL,
        from_message_id TEXT NOT NULL,
        to_message_id TEXT NOT NULL,
        details TEXT,
        created_at TEXT NOT NULL
      )`,
      "CREATE INDEX IF NOT EXISTS agent_compactions_session ON agent_compactions(session_num, seq)",
      `CREATE VIRTUAL TABLE IF NOT EXISTS agent_messages_fts USING fts5(
        text, sid, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
      )`,
    ],
  },
  {
    version: 2,
    statements: [
      `CREATE TABLE IF NOT EXISTS agent_context_blocks (
        key TEXT PRIMARY KEY,
        content TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`,
      `CREATE TABLE IF NOT EXISTS agent_search_entries (
        seq INTEGER PRIMARY KEY,
        label TEXT NOT NULL,
        key TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (label, key)
      )`,
      `CREATE VIRTUAL TABLE IF NOT EXISTS agent_search_entries_fts USING fts5(
        text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
      )`,
    ],
  },
  // The session registry of SessionManager. `activity` is a store-wide write counter: it orders rows written
  // within the same millisecond, so list() is "newest activity first" and stable; the index serves list() directly.
  {
    version: 3,
    statements: [
      `CREATE TABLE IF NOT EXISTS agent_sessions (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        parent_session_id TEXT,
        model TEXT,
        source TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        estimated_cost REAL NOT NULL DEFAULT 0,
        end_reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        activity INTEGER NOT NULL UNIQUE
      )`,
      "CREATE INDEX IF NOT EXISTS agent_sessions_recent ON agent_sessions(updated_at DESC, activity DESC)",
    ],
  },
  // Batched search indexing (search-index.ts): messages up to `indexed_seq` are in the FTS index. Every message
  // stored before this step was indexed on append, so the watermark starts at the newest one.
  {
    version: 4,
    statements: [
      `CREATE TABLE IF NOT EXISTS agent_search_state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        indexed_seq INTEGER NOT NULL
      )`,
      `INSERT INTO agent_search_state (id, indexed_seq) SELECT 1, IFNULL(MAX(seq), 0) FROM agent_messages WHERE true
       ON CONFLICT (id) DO NOTHING`,
    ],
  },
  // Large messages (sql/engines/sqlite/chunks.ts) and cheap no-op updates: `chunks` counts the continuation rows of a message split
  // over the engine's value limit (0 for every message that fits, and for every row stored before this step);
  // `content_hash` is the SHA-256 of the stored JSON, so an update of identical content is detected without
  // reading the content (NULL for older rows: their first update writes).
  {
    version: 5,
    statements: [
      "ALTER TABLE agent_messages ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE agent_messages ADD COLUMN content_hash TEXT",
      `CREATE TABLE IF NOT EXISTS agent_message_chunks (
        seq INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (seq, idx)
      )`,
    ],
  },
  // Offloaded media payloads (attachments.ts): each stored once, chunked to the driver's value limit, and a link
  // row per (message row, payload) whose count is the payload's reference count. Version 5 is large messages.
  {
    version: 6,
    statements: attachmentTableStatements(STORE_TABLES),
  },
  // Adoption of the reference's tables (adopt.ts): one row per adopted source, so it runs once.  (5 is large messages, 6
  // attachments.)
  {
    version: 7,
    statements: [
      `CREATE TABLE IF NOT EXISTS agent_adoptions (
        source TEXT PRIMARY KEY,
        adopted_at TEXT NOT NULL,
        report TEXT NOT NULL
      )`,
    ],
  },
  // Cheaper search indexing (search-index.ts): FTS5 merges a level's segments once `automerge` of them pile up.
  // At 8 instead of the default 4 every indexed row is rewritten fewer times: a 128-row batch costs ~7 % less CPU
  // in steady state (10,000-message session), search p50 unchanged within noise (docs/PERFORMANCE.md). A setting
  // stored in the index's own config table, so it applies to stores made before this step too.
  {
    version: 8,
    statements: ["INSERT INTO agent_messages_fts (agent_messages_fts, rank) VALUES ('automerge', 8)"],
  },
  // What ranked recall (search/rank.ts) weighs its candidates by, without reading their rows: a search across
  // all sessions of a 1M-message store looks up its 2,000 candidates' parents and lengths on random pages of a
  // ~900 MiB table (p50 ~10 ms), in this index on ~20 MiB (p50 ~6 ms). It costs an append ~6 µs (p50, 10,000-message
  // session) and ~0.9 s to build for 1M messages, once (docs/PERFORMANCE.md, "Ranked recall at 1M").
  {
    version: 9,
    statements: [
      "CREATE INDEX IF NOT EXISTS agent_messages_node ON agent_messages(seq, parent_seq, session_num, tokens)",
    ],
  },
  // Chinese, Japanese and Korean runs are indexed in character pairs (search/cjk.ts): rows indexed before, one
  // token a run, are indexed again, or a word inside a clause would not find them.
  {
    version: 10,
    statements: [],
    run: retokenizeCjk,
  },
  // The sessions of one source in id order (registry scan({ source }): the agent runtime's list()): without it a
  // scan for the few agent sessions of a store walked every conversation's row. Updates never write to it (they
  // change neither column).
  {
    version: 11,
    statements: ["CREATE INDEX IF NOT EXISTS agent_sessions_source ON agent_sessions(source, id)"],
  },
  // Whether a session may hold a message without searchable text (an agent's tool step), which ranked recall
  // passes through (search/text-parents.ts): a session without one is searched as before, with no statement more.
  // Set when such a message is indexed, never cleared; here for the messages indexed so far (one read of the
  // messages' covering index and a lookup of each in the search index).
  {
    version: 12,
    statements: [],
    run: markTextlessSessions,
  },
  // Whose a session is (store/owner.ts): set when it is registered, never changed. The index holds only owned
  // sessions in list()'s order, so an owner's list is one range of it and other owners' rows are never read; a
  // store without owners pays nothing for it (a NULL owner has no entry).
  {
    version: 13,
    statements: [],
    run: addOwnerColumn,
  },
  // A pinned session is exempt from retention (store/retention.ts); 0 for every row there was.
  {
    version: 14,
    statements: [],
    run: addPinnedColumn,
  },
  // A session's roots (getSiblings of a root: an edit of the first message makes a new root), oldest first: only
  // rows without a parent have an entry, in rowid (seq) order, so the roots are one range however long the session.
  {
    version: 15,
    statements: [
      "CREATE INDEX IF NOT EXISTS agent_messages_roots ON agent_messages(session_num) WHERE parent_seq IS NULL",
    ],
  },
  // The change log's rows by session (feed/change-log.ts), for a log made before this step.
  { version: 16, statements: [], run: indexChangeLog },
  // An owned session's indexed messages hold the owner's token beside the session's (search/owner-index.ts), so an
  // owner's search is one token inside the index; the rows indexed before it take it here, once.
  {
    version: 17,
    statements: [],
    run: (driver) => {
      retokenizeOwned(driver);
    },
  },
  // Encryption at rest (store/crypto): per owner with a key, a keyed check of that key (never the key), so a
  // wrong key is refused before it writes and an owner's content is never written in clear once it had a key.
  {
    version: 18,
    statements: [
      `CREATE TABLE IF NOT EXISTS agent_owner_keys (
        owner_hash TEXT PRIMARY KEY,
        key_check TEXT NOT NULL
      ) WITHOUT ROWID`,
    ],
  },
  // A streaming answer's chunks, kept while it runs so a reloaded page rejoins it (ai-sdk/resumable.ts).
  { version: 19, statements: STREAM_TABLES },
  // An owner's unfinished key rotation: the key it moves from and how far rekey got (sql/rekey/sqlite-rotation.ts).
  { version: 20, statements: REKEY_TABLES },
  // Sealed context blocks and search entries (sealed-context.ts): a block's flag, an entry's length in clear (its
  // content column holds the ciphertext, and the entry ranking reads lengths). NULL: stored in clear.
  { version: 21, statements: [], run: addSealedColumns },
  // Whose a block or entry is, by record (records.ts): the session or the owner its write named; rows stored before
  // are given one where the old suffix rule is unambiguous (context/legacy-records.ts).
  { version: 22, statements: [], run: addContextRecords },
  // 23–26 and 29: the facts' (sql/facts/sqlite-schema.ts); 27 and 28: the storage rooms' (a LangGraph thread's
  // checkpoints, a LangGraph store's items: src/sql/rooms/).
];

/** The schema: its own steps, the facts' and the storage rooms' (src/sql/rooms/sqlite.ts), in version order. */
export const SQLITE_MIGRATIONS: Migration[] = [
  ...CORE_MIGRATIONS,
  ...SQLITE_FACT_MIGRATIONS,
  ...SQLITE_ROOMS.flatMap((room) => room.migrations),
].sort((a, b) => a.version - b.version);

function addSealedColumns(driver: SqlDriver): void {
  const blocks = driver.column<string>("SELECT name FROM pragma_table_info('agent_context_blocks')");
  if (!blocks.includes("sealed")) driver.run("ALTER TABLE agent_context_blocks ADD COLUMN sealed INTEGER");
  const entries = driver.column<string>("SELECT name FROM pragma_table_info('agent_search_entries')");
  if (!entries.includes("sealed_chars")) {
    driver.run("ALTER TABLE agent_search_entries ADD COLUMN sealed_chars INTEGER");
  }
}

function addPinnedColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_sessions')");
  if (!columns.includes("pinned")) {
    driver.run("ALTER TABLE agent_sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0");
  }
}

function addOwnerColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_sessions')");
  if (!columns.includes("owner")) driver.run("ALTER TABLE agent_sessions ADD COLUMN owner TEXT");
  driver.run(`CREATE INDEX IF NOT EXISTS agent_sessions_owner
    ON agent_sessions(owner, updated_at DESC, activity DESC) WHERE owner IS NOT NULL`);
}

function markTextlessSessions(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_session_heads')");
  if (!columns.includes("textless")) {
    driver.run("ALTER TABLE agent_session_heads ADD COLUMN textless INTEGER NOT NULL DEFAULT 0");
  }
  driver.run(`UPDATE agent_session_heads SET textless = 1 WHERE num IN (
    SELECT m.session_num FROM agent_messages m INDEXED BY agent_messages_node
    WHERE m.seq <= (SELECT indexed_seq FROM agent_search_state WHERE id = 1)
      AND NOT EXISTS (SELECT 1 FROM agent_messages_fts f WHERE f.rowid = m.seq))`);
}

/** Brings the schema to the newest version; safe to run from several processes at once and on every open. */
export function migrate(driver: SqlDriver, migrations: readonly Migration[] = SQLITE_MIGRATIONS): number {
  driver.run(
    "CREATE TABLE IF NOT EXISTS agent_session_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
  );
  const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const current = () =>
    driver.get<{ version: number }>("SELECT version FROM agent_session_schema WHERE id = 1")?.version ?? 0;
  const found = current();
  if (found >= latest) return found;
  try {
    return migrateUnderLock(driver, migrations, current);
  } catch (error) {
    if (!isReadonlyError(error)) throw error;
    throw new SessionError(
      "READONLY",
      `This SQLite database has schema version ${found} and this release needs ${latest}: open it once with a ` +
        "connection that may write, which migrates it; a read-only connection cannot",
      { cause: error },
    );
  }
}

// The write lock taken by the transaction serialises concurrent migrators; the version is re-read under it.
function migrateUnderLock(
  driver: SqlDriver,
  migrations: readonly Migration[],
  current: () => number,
): number {
  return driver.transaction(() => {
    let version = current();
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= version) continue;
      for (const statement of migration.statements) driver.run(statement);
      migration.run?.(driver);
      version = migration.version;
    }
    driver.run(
      "INSERT INTO agent_session_schema (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
      [version],
    );
    return version;
  });
}
