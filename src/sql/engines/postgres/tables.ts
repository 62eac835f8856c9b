/**
 * The ground floor of the Postgres backend: the store's resolved table names (schema and prefix applied, validated
 * as plain identifiers so they can be spliced into SQL) and the memo that builds each statement's text once per set
 * of names. Every row module builds its statements from these; the options and migrations sit above (schema.ts).
 */
import { z } from "zod";
import { SessionError } from "../../../errors.js";
import { describe } from "../../../message/describe.js";
import { parseInput } from "../../../schema/parse.js";
import { refusedBy } from "../../../schema/rules.js";
import { rule } from "../../../schema/to-session-error.js";
import { type Layout, singleNode } from "./layout.js";

/** The options that name the tables (a part of `PostgresStoreOptions`). */
export interface TableOptions {
  schema?: string;
  tablePrefix?: string;
  prepare?: boolean;
  distributed?: boolean;
}

/** Quoted, qualified table names, plus the raw parts index names and the migration lock are derived from. */
export interface Tables {
  heads: string;
  messages: string;
  messagesSeq: string;
  compactions: string;
  attachments: string;
  attachmentLinks: string;
  blocks: string;
  entries: string;
  sessions: string;
  sessionsActivity: string;
  adoptions: string;
  streams: string;
  streamChunks: string;
  /** Each encrypted owner's key check (sql/sealing/postgres.ts), under a hash of the owner id. */
  ownerKeys: string;
  /** Each owner's unfinished key rotation and its cursor (sql/rekey/postgres-rotation.ts). */
  ownerRekeys: string;
  version: string;
  schema: string | null;
  prefix: string;
  prepare: boolean;
  /** Whether the store was opened with `distributed: true` (layout-check.ts matches it to the tables' catalog). */
  distributed: boolean;
  /**
   * The statement shapes of the tables' layout (sql/engines/postgres/layout.ts): single node, or Citus (citus/layout.ts),
   * which the store sets as it opens them (store.ts), so that only a distributed store loads it.
   */
  layout: Layout;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Postgres truncates identifiers at 63 bytes; the longest derived name adds 30 characters to the prefix.
const MAX_PREFIX = 30;

/** A name quoted as an SQL identifier (already checked to be a plain one). */
export function quote(name: string): string {
  return `"${name}"`;
}

/** The quoted, qualified name of a declared table (its name under the prefix), as tableNames makes them. */
export function qualified(t: Tables, table: string): string {
  return (t.schema ? `${quote(t.schema)}.` : "") + quote(t.prefix + table);
}

/** The options naming the tables (`INVALID_ARGUMENT` at the option); the others pass unread. */
const tableOptions = z.object({
  distributed: z.boolean(rule("distributed must be a boolean")).default(false),
  schema: z
    .custom<string>(
      (schema) => typeof schema === "string" && IDENTIFIER.test(schema) && schema.length <= 63,
      rule("schema must be a plain SQL identifier", "format"),
    )
    .optional(),
  tablePrefix: refusedBy<string>(
    (prefix) =>
      typeof prefix !== "string" || (prefix !== "" && !IDENTIFIER.test(prefix))
        ? `tablePrefix must be an identifier prefix, got ${describe(prefix)}`
        : prefix.length > MAX_PREFIX
          ? `tablePrefix must be at most ${MAX_PREFIX} characters`
          : undefined,
    (prefix) => (typeof prefix === "string" && IDENTIFIER.test(prefix) ? "too_long" : "format"),
  ).default(""),
});

/**
 * The layout of tables named for `distributed: true` until the store that opens them sets the Citus one (store.ts);
 * names only (a test's, an option check) keep it: any statement built on it throws.
 */
const unopened = new Proxy({} as Layout, {
  get() {
    throw new SessionError(
      "UNSUPPORTED",
      "the Citus layout is given to tableNames by the store that opens the tables (store.ts)",
    );
  },
});

/**
 * Resolves and validates table names (plain identifiers only, so they can be spliced into SQL safely), in the
 * single-node layout, or with `distributed: true` for the Citus one, which the store sets as it opens them.
 */
export function tableNames(options: TableOptions = {}): Tables {
  const { prepare = true } = options;
  const { schema, tablePrefix, distributed } = parseInput(tableOptions, options);
  const name = (table: string) => (schema ? `${quote(schema)}.` : "") + quote(tablePrefix + table);
  return {
    heads: name("agent_session_heads"),
    messages: name("agent_messages"),
    messagesSeq: name("agent_messages_seq"),
    compactions: name("agent_compactions"),
    attachments: name("agent_attachments"),
    attachmentLinks: name("agent_attachment_links"),
    blocks: name("agent_context_blocks"),
    entries: name("agent_search_entries"),
    sessions: name("agent_sessions"),
    sessionsActivity: name("agent_sessions_activity"),
    adoptions: name("agent_adoptions"),
    streams: name("agent_streams"),
    streamChunks: name("agent_stream_chunks"),
    ownerKeys: name("agent_owner_keys"),
    ownerRekeys: name("agent_owner_rekeys"),
    version: name("agent_session_schema"),
    schema: schema ?? null,
    prefix: tablePrefix,
    prepare: prepare !== false,
    distributed,
    layout: distributed ? unopened : singleNode,
  };
}

const built = new WeakMap<Tables, Map<(t: Tables) => string, string>>();

/**
 * Memoises a SQL builder per set of table names, so each statement's text is built once and is the same string
 * every time (cheap to look up as a prepared-statement key).
 */
export function statement(build: (t: Tables) => string): (t: Tables) => string {
  return (t) => {
    let cache = built.get(t);
    if (!cache) {
      cache = new Map();
      built.set(t, cache);
    }
    let sql = cache.get(build);
    if (sql === undefined) {
      sql = build(t);
      cache.set(build, sql);
    }
    return sql;
  };
}
