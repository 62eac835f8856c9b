/**
 * The record a row stored before records existed is given once, by the schema step that adds them (SQLite and
 * Postgres migration 22): the old suffix rule, applied only where it cannot be wrong. The library's own rows name
 * their kind in a prefix (`_system_prompt_<session>`, `_agent_state_<session>`, `_memories_session_<session>`,
 * `_memories_owner_<owner>`); any other key is a session's only when exactly one of its suffixes after a `_` names a
 * stored session and none names an owner (`profile_bob` is an owner's block as often as session `bob`'s). Every
 * other row stays unrecorded: owner-scoped tools never reach it, and no erasure removes it by record.
 */
import type { ContextRecord } from "../contract/context.js";
import type { TransferRow } from "../contract/transfer.js";
import { memoryDirectoryKey } from "./block-keys.js";
import { type RecordParams, recordParams } from "./records.js";

/** The rule that gives a row stored before records its record; the backfill (sql/context-records/) runs it. */
export interface LegacyRule {
  /** The ids a name may name. */
  candidates(name: string): string[];
  /** The record of `name`, given which of its candidates are stored sessions and owners; undefined: none. */
  record(name: string, known: KnownIds): RecordParams | undefined;
}

/** Prefixes of the library's own per-session rows (session/context.ts, agent/storage/mapping.ts, the memory tool). */
const SESSION_PREFIXES = ["_system_prompt_", "_agent_state_", memoryDirectoryKey("session", "")];
const OWNER_PREFIX = memoryDirectoryKey("owner", "");

/** The ids a key may name: after the library prefix, or every suffix after a `_` (not the first character). */
export function candidateIds(key: string): string[] {
  for (const prefix of [...SESSION_PREFIXES, OWNER_PREFIX]) {
    if (key.startsWith(prefix) && key.length > prefix.length) return [key.slice(prefix.length)];
  }
  const ids: string[] = [];
  for (let at = key.indexOf("_", 1); at >= 0; at = key.indexOf("_", at + 1)) {
    if (at + 1 < key.length) ids.push(key.slice(at + 1));
  }
  return ids;
}

/**
 * The record of a legacy key (see the module comment), given which of its candidate ids are stored sessions and
 * which are owners; undefined: it stays unrecorded.
 */
export function legacyRecord(
  key: string,
  sessions: ReadonlySet<string>,
  owners: ReadonlySet<string>,
): ContextRecord | undefined {
  if (key.startsWith(OWNER_PREFIX) && key.length > OWNER_PREFIX.length) {
    return { owner: key.slice(OWNER_PREFIX.length) };
  }
  for (const prefix of SESSION_PREFIXES) {
    if (!key.startsWith(prefix) || key.length === prefix.length) continue;
    const id = key.slice(prefix.length);
    return sessions.has(id) ? { sessionId: id } : undefined;
  }
  const ids = candidateIds(key);
  const named = ids.filter((id) => sessions.has(id));
  if (named.length !== 1 || ids.some((id) => owners.has(id))) return undefined;
  return { sessionId: named[0]! };
}

/** The rule as schema step 22's backfill (sql/context-records/steps.ts) applies it, on either SQL engine. */
export const LEGACY_RULE: LegacyRule = {
  candidates: candidateIds,
  record(name, known) {
    const record = legacyRecord(name, known.sessions, known.owners);
    return record && recordParams(record);
  },
};

/** Which of some ids are stored sessions, and which are owners of registered sessions. */
export interface KnownIds {
  sessions: ReadonlySet<string>;
  owners: ReadonlySet<string>;
}

/** The name a row's record is read from by the legacy rule: a block's key, an entry's label. */
function nameOf(row: TransferRow): string {
  return row.kind === "block" ? row.key : row.label;
}

/** The ids an import must look up for the rows that carry no record ({@link rowRecord}). */
export function idsToKnow(rows: readonly TransferRow[]): string[] {
  const bare = rows.filter((row) => row.sessionId === undefined && row.owner === undefined);
  return [...new Set(bare.map(nameOf).flatMap(candidateIds))];
}

/**
 * The record of an imported row: the one it carries (checked by the transfer schema, store/transfer/schema.ts, before
 * any importer sees the row), else the legacy rule's ({@link legacyRecord}), with `known` read after the import's
 * sessions are stored.
 */
export function rowRecord(row: TransferRow, known: KnownIds): ContextRecord | undefined {
  if (row.sessionId !== undefined) return { sessionId: row.sessionId };
  if (row.owner !== undefined) return { owner: row.owner };
  return legacyRecord(nameOf(row), known.sessions, known.owners);
}
