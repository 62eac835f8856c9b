/**
 * Every table a SQLite store may create, and what each can hold of an owner's (src/store/owner-data.ts): the purge
 * derives its index merges, its sqlite-vec drain and its statistics refresh from it (sql/purge/sqlite.ts), docs/PRIVACY.md's
 * table is rendered from it, and test/privacy/owner-data.test.ts fails when a migration makes a table or a
 * text/blob column not declared here (a storage room's tables are declared in its room, src/sql/room.ts). Every ordinary table is zeroed as it is deleted from (`secure_delete`).
 */
import type { OwnerDataDeclaration, OwnerDataTable } from "../../store/owner-data.js";
import { sqliteFactTables } from "../facts/owner-data.js";
import type { Plain } from "../room.js";
import { SQLITE_ROOMS } from "../rooms/sqlite.js";

const WITH_SESSION = "deleted with its session (erase.ts)";
const ZEROED = "zeroed" as const;

/** An FTS5 index's shadow tables (their names end with these): what the index stores, merged with it. */
function ftsShadows(index: string, holds: string): OwnerDataTable[] {
  const shadow = (suffix: string, what: string, columns: OwnerDataTable["columns"]): OwnerDataTable => ({
    table: `${index}_${suffix}`,
    holds: `${holds}: ${what}`,
    tie: "none",
    citus: "none",
    sealed: "n/a",
    erasure: "with the index",
    purge: "with-owner",
    columns,
  });
  return [
    shadow("data", "segments (terms and postings)", { block: "derived" }),
    shadow("idx", "segment index (terms)", { term: "derived", segid: "meta", pgno: "meta" }),
    shadow("config", "settings", { k: "meta", v: "meta" }),
    shadow("docsize", "token counts", { sz: "meta", origin: "meta" }),
  ];
}

/** sqlite-vec's table's shadow tables (created with it on the first vector). */
const VEC_SHADOWS: OwnerDataTable[] = [
  ["info", "settings", { key: "meta", value: "meta" }],
  ["chunks", "chunk bookkeeping", { validity: "meta", rowids: "meta", partition00: "meta" }],
  ["rowids", "rowid to chunk", { id: "meta" }],
  ["vector_chunks00", "vectors", { rowid: "id", vectors: "derived" }],
].map(([suffix, what, columns]) => ({
  table: `agent_message_vectors_vec_${suffix as string}`,
  holds: `sqlite-vec's table: ${what as string}`,
  tie: "none",
  citus: "none",
  sealed: "n/a",
  erasure: "with sqlite-vec's table (a delete zeroes the vector)",
  purge: "with-owner",
  madeBy: "sqlite-vec",
  columns: columns as OwnerDataTable["columns"],
}));

const plain: Plain = (table, holds, tie, sealed, erasure, columns, sealedAs) => ({
  table,
  holds,
  tie,
  citus: "none",
  sealed,
  erasure,
  purge: ZEROED,
  columns,
  ...(sealedAs ? { sealedAs } : {}),
});

/** The tables of a SQLite store. */
export const SQLITE_OWNER_DATA: OwnerDataDeclaration = [
  plain("agent_session_heads", "a session's head: its latest leaf", "session", "n/a", WITH_SESSION, {
    session_id: "id",
    created_at: "meta",
    updated_at: "meta",
  }),
  plain(
    "agent_messages",
    "messages",
    "session",
    "sealed",
    WITH_SESSION,
    {
      id: "id",
      role: "meta",
      content: "content",
      created_at: "meta",
      content_hash: "derived",
    },
    { content: "message" },
  ),
  plain(
    "agent_message_chunks",
    "continuation rows of a large message",
    "message",
    "sealed",
    WITH_SESSION,
    {
      data: "content",
    },
    { data: "message" },
  ),
  plain(
    "agent_compactions",
    "overlays (compaction summaries)",
    "session",
    "sealed",
    WITH_SESSION,
    {
      id: "id",
      summary: "content",
      from_message_id: "id",
      to_message_id: "id",
      details: "content",
      created_at: "meta",
    },
    { summary: "overlay", details: "clear" },
  ),
  {
    table: "agent_messages_fts",
    holds: "the messages' search index (contentless)",
    tie: "message",
    citus: "none",
    sealed: "sealed",
    erasure: "a message's terms deleted with it (a tombstone until a merge)",
    purge: "fts-merge",
    columns: { text: "derived", sid: "id" },
  },
  ...ftsShadows("agent_messages_fts", "the messages' search index"),
  plain(
    "agent_search_state",
    "how far the search index got",
    "none",
    "n/a",
    "never holds an owner's data",
    {},
  ),
  plain(
    "agent_context_blocks",
    "context blocks (prompts, memory, memory-tool files)",
    "record",
    "sealed",
    "deleted by record (the session's or owner's), unrecorded rows by the manager's known labels (manager/erase.ts)",
    { key: "name", content: "content", updated_at: "meta", session_id: "id", owner: "name" },
    { content: "block" },
  ),
  plain(
    "agent_search_entries",
    "searchable context entries",
    "record",
    "sealed",
    "deleted by record (the session's or owner's), unrecorded rows by the manager's known labels (manager/erase.ts)",
    {
      label: "name",
      key: "name",
      content: "content",
      created_at: "meta",
      updated_at: "meta",
      session_id: "id",
      owner: "name",
    },
    { content: "entry" },
  ),
  {
    table: "agent_search_entries_fts",
    holds: "the entries' search index (contentless)",
    tie: "message",
    citus: "none",
    sealed: "sealed",
    erasure: "an entry's terms deleted with it (a tombstone until a merge)",
    purge: "fts-merge",
    columns: { text: "derived" },
  },
  ...ftsShadows("agent_search_entries_fts", "the entries' search index"),
  plain(
    "agent_sessions",
    "the registry: names, owners, models, usage",
    "session",
    "sealed",
    WITH_SESSION,
    {
      id: "id",
      name: "name",
      parent_session_id: "id",
      model: "meta",
      source: "meta",
      end_reason: "meta",
      created_at: "meta",
      updated_at: "meta",
      owner: "name",
    },
    { name: "name" },
  ),
  plain(
    "agent_attachments",
    "offloaded media payloads",
    "payload",
    "n/a",
    "deleted when no message links it",
    {
      hash: "derived",
      data: "content",
    },
  ),
  plain("agent_attachment_links", "which message row links which payload", "message", "n/a", WITH_SESSION, {
    hash: "derived",
  }),
  plain(
    "agent_adoptions",
    "which reference tables were adopted",
    "none",
    "n/a",
    "never holds an owner's data",
    {
      source: "meta",
      adopted_at: "meta",
      report: "meta",
    },
  ),
  plain("agent_owner_keys", "each encrypted owner's key check", "owner", "n/a", "deleted by eraseOwner", {
    owner_hash: "derived",
    key_check: "meta",
  }),
  plain("agent_streams", "a running answer's stream head", "session", "clear", WITH_SESSION, {
    session_id: "id",
    stream_id: "id",
    state: "meta",
    error: "content",
  }),
  plain(
    "agent_stream_chunks",
    "a running answer's chunks",
    "session",
    "sealed",
    "deleted with its session; a finished answer's when dropped or expired",
    { session_id: "id", stream_id: "id", chunk: "content" },
    { chunk: "stream" },
  ),
  plain(
    "agent_owner_rekeys",
    "an owner's unfinished key rotation",
    "owner",
    "n/a",
    "deleted by eraseOwner and when the rotation ends",
    { owner_hash: "derived", from_check: "meta", message_id: "id" },
  ),
  // The facts' tables (src/sql/facts/owner-data.ts).
  ...sqliteFactTables({ plain, withSession: WITH_SESSION }, ftsShadows),
  // The storage rooms' tables (src/sql/rooms/sqlite.ts), each room declaring its own.
  ...SQLITE_ROOMS.flatMap((room) => room.ownerData({ plain, withSession: WITH_SESSION })),
  plain("agent_session_schema", "the schema version", "none", "n/a", "never holds an owner's data", {}),
  {
    ...plain(
      "agent_changes",
      "the change log: write events, an overlay's summary among them",
      "session",
      "sealed",
      "a session's rows deleted with it; others pruned by retention",
      { origin: "meta", session_id: "id", kind: "meta", ids: "id", parent_id: "id", data: "content" },
      { data: "overlay" },
    ),
    erasureWrites: { kind: "erased" },
    deleteKeeps:
      "a delete keeps the session's events (an overlay's summary among them) until the log's retention prunes them; an erasure deletes them",
    madeBy: "changeLog",
  },
  {
    ...plain(
      "agent_message_vectors",
      "each message's embedding (the plain index's vector)",
      "message",
      "n/a",
      "deleted by a trigger with its message, in any connection",
      { content_hash: "derived", text_hash: "derived", vector: "derived", failure: "derived" },
    ),
    madeBy: "embedder",
  },
  {
    ...plain(
      "agent_vector_state",
      "the vectors' size and kind",
      "none",
      "n/a",
      "never holds an owner's data",
      {
        kind: "meta",
      },
    ),
    madeBy: "embedder",
  },
  {
    ...plain(
      "agent_message_vectors_gone",
      "vectors deleted but still in sqlite-vec's table",
      "message",
      "n/a",
      "filled by the vector delete's trigger, drained by a connection with sqlite-vec",
      {},
    ),
    madeBy: "sqlite-vec",
    erasureFills:
      "a vector row's delete fills it (in any connection); the drain empties it, with the vectors it names from sqlite-vec's table",
  },
  {
    table: "agent_message_vectors_vec",
    holds: "sqlite-vec's index of the vectors",
    tie: "message",
    citus: "none",
    sealed: "n/a",
    erasure: "its rows go when agent_message_vectors_gone is drained (the purge drains it)",
    purge: "vec-drain",
    madeBy: "sqlite-vec",
    columns: { rowid: "id", embedding: "derived", session_num: "meta" },
  },
  ...VEC_SHADOWS,
  {
    table: "sqlite_stat4",
    holds: "SQLite's statistics (only after an ANALYZE): sampled index keys",
    tie: "none",
    citus: "none",
    sealed: "n/a",
    erasure: "not by a delete: the purge runs ANALYZE again",
    purge: "reanalyze",
    madeBy: "ANALYZE",
    columns: { tbl: "meta", idx: "meta", neq: "meta", nlt: "meta", ndlt: "meta", sample: "name" },
  },
  {
    table: "sqlite_stat1",
    holds: "SQLite's statistics (only after an ANALYZE): row counts",
    tie: "none",
    citus: "none",
    sealed: "n/a",
    erasure: "not by a delete: the purge runs ANALYZE again",
    purge: "reanalyze",
    madeBy: "ANALYZE",
    columns: { tbl: "meta", idx: "meta", stat: "meta" },
  },
];
