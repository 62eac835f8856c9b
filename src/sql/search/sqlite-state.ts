/** What a search reads first: the store's size, the search index's watermark and how to keep to its sessions. */
import { canBeStored } from "../../message/ids.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { ownerToken } from "./sqlite-owner-index.js";
import type { HitHead } from "./sqlite-page.js";

/**
 * What a search needs to know first: the store's size (highest seq), the index watermark, the session's scope, or
 * the set of sessions it keeps to (`sessionIds` without `sessionId`).
 */
export interface SearchState {
  total: number;
  indexed: number | null;
  scope:
    | {
        num: number;
        filter: "none" | "lookup" | "token";
        head: HitHead;
        /** Whether the session may hold messages without searchable text (text-parents.ts). */
        textless: boolean;
      }
    | undefined;
  sessions?: SessionSetScope | undefined;
}

/**
 * The state of a search of `sessionId`, or of the set `sessionIds` when no one session is named (see
 * readSearchState and readSessionSet), kept to `owner`'s sessions when given; undefined when nothing is stored to
 * search. An owner's search without sessions named is the owner's token inside the index (owner-index.ts): its
 * sessions are never listed, however many they are.
 */
export function readScopedState(
  driver: SqlDriver,
  {
    sessionId,
    sessionIds,
    owner,
  }: {
    sessionId: string | undefined;
    sessionIds: ReadonlySet<string> | undefined;
    owner?: string | undefined;
  },
): SearchState | undefined {
  const state = readSearchState(driver, sessionId);
  if (state === undefined) return undefined;
  if (sessionId !== undefined)
    return owner === undefined || owns(driver, owner, sessionId) ? state : undefined;
  if (sessionIds !== undefined) {
    const sessions = readSessionSet(driver, sessionIds, owner);
    return sessions === undefined ? undefined : { ...state, sessions };
  }
  if (owner === undefined) return state;
  // As many rows as the store holds, and maybe messages without text: what a store-wide search assumes.
  const sessions = { match: `sid : "${ownerToken(owner)}"`, rows: state.total, textless: true };
  return { ...state, sessions };
}

// Whether the session registered as `sessionId` is `owner`'s: one key lookup.
function owns(driver: SqlDriver, owner: string, sessionId: string): boolean {
  return (
    driver.get("SELECT 1 AS owned FROM agent_sessions WHERE id = ? AND owner = ?", [sessionId, owner]) !==
    undefined
  );
}

/** `match` kept to the search's sessions inside the index: one session's token, or the set's tokens ORed. */
export function scopedMatch({ scope, sessions }: SearchState, match: string): string {
  if (scope?.filter === "token") return `sid : "s${scope.num}" AND ${match}`;
  return sessions === undefined ? match : `${sessions.match} AND ${match}`;
}

/**
 * How a search is kept to one session (undefined: the session has no messages). The session token in the FTS
 * query lets FTS5 skip other sessions' matches, but bm25 then counts the documents of the token as well — a
 * walk over every message of the session on each query: in a store that is mostly one session (a Durable
 * Object, an everyday single-conversation file) a scoped search cost 5× a store-wide one (8.3 ms against
 * 1.3 ms at 10,000 messages). So: a session alone in the store needs no filter at all; one holding at least
 * three quarters of the rows is filtered by a primary-key lookup per match (other sessions then hold at most a
 * third as many rows, so the lookups never cost much more than that walk); any other keeps the token. The
 * candidates are the same either way: where other sessions' matches took part of a term's window, a lookup reads
 * the session's own newest matches as well (term-matches.ts). Read with the store's size and the index watermark,
 * in one statement; undefined when the session is not stored (nothing to search).
 */
export function readSearchState(driver: SqlDriver, sessionId: string | undefined): SearchState | undefined {
  if (sessionId === undefined) {
    const row = driver.get<{ total: number; indexed: number | null }>(
      `SELECT IFNULL(MAX(seq), 0) AS total, (SELECT indexed_seq FROM agent_search_state WHERE id = 1) AS indexed
         FROM agent_messages`,
    );
    return { total: row?.total ?? 0, indexed: row?.indexed ?? null, scope: undefined };
  }
  // A session id no head can have is not looked up: better-sqlite3 13 binds a lone surrogate as U+FFFD, which
  // would find another tenant's session (see sessionNum).
  if (!canBeStored(sessionId)) return undefined;
  // The head's leaf comes along for the hits (page.ts), which then read only the messages' own columns.
  const [row] = driver.tuples<
    [
      num: number,
      count: number,
      leafSeq: number | null,
      leafDepth: number | null,
      total: number,
      indexed: number | null,
      alone: number,
      overlays: number,
      textless: number,
    ]
  >(
    `SELECT h.num, h.message_count AS count, h.leaf_seq, l.depth AS leaf_depth,
         (SELECT IFNULL(MAX(seq), 0) FROM agent_messages) AS total,
         (SELECT indexed_seq FROM agent_search_state WHERE id = 1) AS indexed,
         NOT EXISTS (SELECT 1 FROM agent_session_heads o WHERE o.num <> h.num AND o.message_count > 0) AS alone,
         EXISTS (SELECT 1 FROM agent_compactions c WHERE c.session_num = h.num) AS overlays, h.textless
       FROM agent_session_heads h LEFT JOIN agent_messages l ON l.seq = h.leaf_seq WHERE h.session_id = ?`,
    [sessionId],
  );
  if (!row) return undefined;
  const [num, count, leafSeq, leafDepth, total, indexed, alone, overlays, textless] = row;
  const filter = alone === 1 ? "none" : count * 4 >= total * 3 ? "lookup" : "token";
  const head: HitHead = {
    session_id: sessionId,
    session_num: num,
    leaf_seq: leafSeq,
    leaf_depth: leafDepth,
    message_count: count,
    // Read with the scope so a search of a session without overlays needs no statement to mark its hits.
    has_overlays: overlays === 1,
  };
  return { total, indexed, scope: { num, filter, head, textless: textless === 1 } };
}

/**
 * How a search keeps to a set of sessions (`sessionIds`: their tokens ORed into each match, and their rows) or to
 * an owner's (the owner's token).
 */
export interface SessionSetScope {
  /** The FTS5 filter to AND with a match. */
  match: string;
  /** How many messages the sessions hold (bounds the matches the filter lets through). */
  rows: number;
  /** Whether any of them may hold messages without searchable text (text-parents.ts). */
  textless: boolean;
}

const SESSION_SET = `SELECT h.num, h.message_count, h.textless FROM json_each(?) j
  JOIN agent_session_heads h ON h.session_id = j.value WHERE h.message_count > 0`;
// The same, of those registered with an owner (the last parameter).
const OWNED_SESSION_SET = `SELECT h.num, h.message_count, h.textless FROM json_each(?) j
  JOIN agent_session_heads h ON h.session_id = j.value JOIN agent_sessions s ON s.id = j.value
  WHERE h.message_count > 0 AND s.owner = ?`;

/**
 * The stored sessions among `ids` as a filter inside the index, so the newest matches a search takes are the
 * sessions' own (filtering after them found nothing for sessions older than the store's newest matches);
 * undefined when none of them holds a message (or, with `owner`, none of those is the owner's). An id no head can
 * have is not looked up (see readSearchState).
 */
function readSessionSet(
  driver: SqlDriver,
  ids: ReadonlySet<string>,
  owner: string | undefined,
): SessionSetScope | undefined {
  const storable = [...ids].filter(canBeStored);
  if (storable.length === 0) return undefined;
  const heads = driver.tuples<[num: number, count: number, textless: number]>(
    owner === undefined ? SESSION_SET : OWNED_SESSION_SET,
    owner === undefined ? [JSON.stringify(storable)] : [JSON.stringify(storable), owner],
  );
  if (heads.length === 0) return undefined;
  let rows = 0;
  for (const [, count] of heads) rows += count;
  const match = `sid : (${heads.map(([num]) => `"s${num}"`).join(" OR ")})`;
  return { match, rows, textless: heads.some(([, , textless]) => textless === 1) };
}
