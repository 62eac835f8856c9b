import type { SessionMessage } from "../../contract/message.js";
import { SessionError } from "../../errors.js";
import { parseMessage } from "../../message/json.js";
import { messageText } from "../../message/text.js";
import type { BlindTokens } from "../../search/blind-tokens.js";
import { blindTokensOf } from "../../search/blind-tokens.js";
import { withTimeTokens } from "../../search/date-terms.js";
import type { QueryTerm } from "../../search/query.js";
import { rankAllWords } from "../../search/score.js";
import { indexTokens, searchableText, TOKEN_CHARACTER } from "../../search/tokens.js";
import { isSealed } from "../../store/crypto/seal.js";
import { boundedText, contentSql, resolveContent, storedText } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { noteIndexedText } from "../engines/sqlite/family-cache.js";
import { isReadonlyError } from "../engines/sqlite/readonly.js";
import { BatchBlinds, sessionIdOf } from "./sqlite-blind.js";
import { ownerOfSession, sidTokens } from "./sqlite-owner-index.js";
import { forgetWrittenTexts, noteWrittenText, takeWrittenText } from "./sqlite-written-texts.js";

/**
 * The message search index is written in batches rather than on every append. FTS5 writes a new segment at every
 * commit and merges them as they pile up, which made the index most of an append's cost (~190 µs mean per
 * one-row commit against ~30 µs per row in a batch). So an append only stores its row, and the rows are indexed
 * together — every `INDEX_BATCH` messages inside the append that reaches the count, before every search (which
 * therefore always sees every stored message), and when the store is closed.
 *
 * Invariant: every message whose `seq` is at most `agent_search_state.indexed_seq` is in `agent_messages_fts`
 * (when it has text); every newer one is not. All writers keep it inside their write transactions, so several
 * processes sharing a file agree on it, and a crash leaves at most a batch unindexed until the next search.
 */
export const INDEX_BATCH = 128;

/** The newest `seq` the search index covers (the watermark). */
export function indexedSeq(driver: SqlDriver): number {
  return (
    driver.get<{ seq: number }>("SELECT indexed_seq AS seq FROM agent_search_state WHERE id = 1")?.seq ?? 0
  );
}

/**
 * Adds one message's text to the index. The text is one value, so where the engine caps values (a Durable Object:
 * 2 MB) only its first ~2 MB are indexed — a documented limit of search there; the message is stored whole. Text
 * without a word (an emoji, punctuation) is left out as no text is: ranked recall reads a message without an index
 * row as one without searchable text (text-parents.ts), as the other backends do, and marks its session as holding
 * such a message (unless `markTextless` is false). `owner`: the session's owner, whose token goes beside the
 * session's (owner-index.ts); undefined looks it up (two key lookups: callers indexing many rows read it with them).
 * `blind`: the owner's blind tokens, for a sealed message (its words go in as those, blind.ts), else null.
 * `time`: the message's time (its row's `created_at`), whose time tokens go in with its words, before any blinding
 * (search/date-terms.ts); undefined reads it from the row.
 */
export function indexText(
  driver: SqlDriver,
  seq: number,
  sessionNum: number,
  text: string,
  markTextless = true,
  owner?: string | null,
  blind: BlindTokens | null = null,
  time?: string | null,
): void {
  const timed =
    text.length === 0 ? text : withTimeTokens(text, time === undefined ? timeOf(driver, seq) : time);
  const words = timed.length === 0 ? "" : blind ? blind.text(indexTokens(timed)) : searchableText(timed);
  const indexed = words.length === 0 ? "" : boundedText(driver, words);
  if (!TOKEN_CHARACTER.test(indexed)) {
    // The session now holds a message ranked recall passes through (text-parents.ts). A schema step older than
    // the mark (retokenize.ts) leaves it to the step that adds it, which reads the whole index.
    if (markTextless) {
      driver.run("UPDATE agent_session_heads SET textless = 1 WHERE num = ? AND textless = 0", [sessionNum]);
    }
    return;
  }
  const sid = sidTokens(sessionNum, owner === undefined ? ownerOfSession(driver, sessionNum) : owner);
  driver.run("INSERT INTO agent_messages_fts (rowid, text, sid) VALUES (?, ?, ?)", [seq, indexed, sid]);
  // Word families kept for this connection learn the new terms (both columns, as fts5vocab lists them).
  noteIndexedText(driver, indexed, sid);
}

// A stored message's time, for a row indexed outside a batch (which reads it with the row).
function timeOf(driver: SqlDriver, seq: number): string | null {
  return (
    driver.get<{ t: string }>("SELECT created_at AS t FROM agent_messages WHERE seq = ?", [seq])?.t ?? null
  );
}

/**
 * After a message row was written: indexes it at once when its `seq` falls under the watermark (a `seq` freed by
 * deleting the newest rows and reused), else leaves it pending and indexes the whole batch once it is full.
 * `sealed`: the key a sealed row was sealed with (checked in this transaction) and the content written. Answers
 * the watermark after it (read again only when a batch was indexed).
 */
export function afterInsert(
  driver: SqlDriver,
  seq: number,
  sessionNum: number,
  message: SessionMessage,
  indexed: number,
  sealed?: { key: Uint8Array; content: string },
): number {
  // A sealed message (an encrypted owner's) goes in as its owner's blind tokens: its words would be plaintext.
  if (seq <= indexed) {
    const blind = sealed ? blindTokensOf(sealed.key) : null;
    indexText(driver, seq, sessionNum, messageText(message), true, undefined, blind);
    return indexed;
  }
  // Its batch takes the words from here rather than open the row again (written-texts.ts).
  if (sealed) noteWrittenText(driver, seq, sealed.content, messageText(message));
  if (seq - indexed < INDEX_BATCH) return indexed;
  indexPending(driver);
  return indexedSeq(driver);
}

/** Removes one message from the index; a pending message is not in it. Call inside a write transaction. */
export function unindexMessage(driver: SqlDriver, seq: number): void {
  if (seq <= indexedSeq(driver)) driver.run("DELETE FROM agent_messages_fts WHERE rowid = ?", [seq]);
}

/** Removes every indexed message of a session from the index. Call inside a write transaction. */
export function unindexSession(driver: SqlDriver, sessionNum: number): void {
  driver.run(
    `DELETE FROM agent_messages_fts WHERE rowid IN (
       SELECT seq FROM agent_messages WHERE session_num = ? AND seq <= (SELECT indexed_seq FROM agent_search_state)
     )`,
    [sessionNum],
  );
}

/** Indexes every pending message and moves the watermark past them. Call inside a write transaction. */
export function indexPending(driver: SqlDriver): number {
  const rows = driver.all<{ seq: number; session_num: number; content: unknown; created_at: string }>(
    `SELECT seq, session_num, ${contentSql()} AS content, created_at FROM agent_messages WHERE seq > ? ORDER BY seq`,
    [indexedSeq(driver)],
  );
  const owners = ownersOf(driver, rows);
  const blinds = new BatchBlinds(driver);
  for (const row of rows) {
    const content = storedText(driver, row.content);
    const owner = owners.get(row.session_num) ?? null;
    let blind: BlindTokens | null = null;
    let text: string | undefined;
    if (isSealed(content)) {
      // An encrypted owner's message goes in as its owner's blind tokens (see afterInsert). A connection without
      // that owner's key cannot open it and leaves it out (docs/PRIVACY.md: every writer holds the keyring).
      const sealing = blinds.of(row.session_num, owner);
      if (sealing === null) continue;
      blind = sealing.blind;
      text =
        takeWrittenText(driver, row.seq, content) ??
        textOf(openedOrEmpty(driver, content, sealing.sessionId));
    } else text = textOf(content);
    if (text !== undefined)
      indexText(driver, row.seq, row.session_num, text, true, owner, blind, row.created_at);
  }
  const last = rows[rows.length - 1];
  if (last) {
    driver.run("UPDATE agent_search_state SET indexed_seq = ? WHERE id = 1", [last.seq]);
    forgetWrittenTexts(driver, last.seq);
  }
  return rows.length;
}

// The searchable text of a message's JSON, or undefined when it does not parse (an unreadable row is left out).
function textOf(json: string): string | undefined {
  const message = parseMessage(json);
  return message ? messageText(message) : undefined;
}

// The owners of the batch's sessions, in one statement of a key lookup per distinct session (a batch is mostly one
// session's): the append path stays as it was, and a store without owners reads nothing more than the lookups.
function ownersOf(driver: SqlDriver, rows: readonly { session_num: number }[]): Map<number, string> {
  const nums = [...new Set(rows.map((row) => row.session_num))];
  if (nums.length === 0) return new Map();
  const found = driver.tuples<[num: number, owner: string]>(
    `SELECT h.num, s.owner FROM json_each(?) j JOIN agent_session_heads h ON h.num = j.value
     JOIN agent_sessions s ON s.id = h.session_id WHERE s.owner IS NOT NULL`,
    [JSON.stringify(nums)],
  );
  return new Map(found);
}

/** True when at least `count` stored messages (default one) are not indexed yet (two O(1) reads, no lock). */
export function hasPending(driver: SqlDriver, count = 1): boolean {
  const row = driver.get<{ pending: number }>(
    `SELECT IFNULL((SELECT MAX(seq) FROM agent_messages), 0) - indexed_seq >= ? AS pending
     FROM agent_search_state WHERE id = 1`,
    [count],
  );
  return row?.pending === 1;
}

/**
 * The pending messages matching `terms` (optionally in one session) with their scores, best first, matched in
 * memory with the query language's own semantics: for a connection that cannot write the index (read-only). At
 * most a batch or two.
 */
export function matchPending(
  driver: SqlDriver,
  terms: QueryTerm[],
  sessionNum: number | undefined,
  owner?: string,
): { seq: number; score: number }[] {
  const texts = pendingTexts(driver, sessionNum, owner);
  return rankAllWords(
    texts,
    terms,
    ({ text }) => text,
    ({ seq }) => seq,
  ).map(({ item, score }) => ({
    seq: item.seq,
    score,
  }));
}

/**
 * The text of every message the index does not hold yet (optionally of one session, or of `owner`'s sessions: each
 * pending row's owner checked by key); unreadable rows left out. Sealed rows are opened (with the keyring's key:
 * `DECRYPT_FAILED` for a wrong one) where the search keeps to a session or an owner, whose key the search checked
 * (blind.ts); a store-wide search finds text in clear only.
 */
export function pendingTexts(
  driver: SqlDriver,
  sessionNum: number | undefined,
  owner?: string,
): { seq: number; text: string }[] {
  const owned =
    owner === undefined
      ? ""
      : ` AND EXISTS (SELECT 1 FROM agent_session_heads h JOIN agent_sessions s ON s.id = h.session_id
          WHERE h.num = m.session_num AND s.owner = ?)`;
  const sql = `SELECT m.seq, m.session_num, ${contentSql("m")} AS content, m.created_at FROM agent_messages m
    WHERE m.seq > (SELECT indexed_seq FROM agent_search_state WHERE id = 1)${owned}`;
  const of = owner === undefined ? [] : [owner];
  type Row = { seq: number; session_num: number; content: unknown; created_at: string };
  const rows =
    sessionNum === undefined
      ? driver.all<Row>(sql, of)
      : driver.all<Row>(`${sql} AND m.session_num = ?`, [...of, sessionNum]);
  const opens = driver.keys !== undefined && (sessionNum !== undefined || owner !== undefined);
  return rows.flatMap((row) => {
    let content = storedText(driver, row.content);
    if (isSealed(content)) {
      const sessionId = opens ? sessionIdOf(driver, row.session_num) : undefined;
      if (sessionId === undefined) return [];
      content = openedOrEmpty(driver, content, sessionId);
    }
    const message = parseMessage(content);
    // With its time tokens, as the index will hold it.
    return message ? [{ seq: row.seq, text: withTimeTokens(messageText(message), row.created_at) }] : [];
  });
}

/**
 * Sealed content opened, or "" when this one row does not open under the owner's key (changed, or moved from
 * another message): an unreadable row, left out of the index as one whose JSON does not parse is; reading it
 * reports DECRYPT_FAILED. A wrong or missing key fails before (blind.ts checks it), for every row.
 */
function openedOrEmpty(driver: SqlDriver, content: string, sessionId: string): string {
  try {
    return resolveContent(driver, content, sessionId);
  } catch (error) {
    if (error instanceof SessionError && error.code === "DECRYPT_FAILED") return "";
    throw error;
  }
}

/**
 * Indexes whatever is pending, in a write transaction of its own (nothing when the index is current). Returns
 * false when this connection may not write, so the caller can search the pending rows another way.
 */
export function flushSearchIndex(driver: SqlDriver): boolean {
  return hasPending(driver) ? indexPendingIfWritable(driver) : true;
}

/**
 * What a search's read on one snapshot answers when the index is behind and it may index: it cannot write inside
 * the snapshot, so the caller indexes and reads again (see SqliteMessageSearch).
 */
export const INDEX_FIRST: unique symbol = Symbol("index first");

/**
 * Indexes the pending messages a caller has already seen (its own read of the watermark), in a write transaction
 * of its own; false when this connection may not write.
 */
export function indexPendingIfWritable(driver: SqlDriver): boolean {
  try {
    driver.transaction(() => indexPending(driver));
    return true;
  } catch (error) {
    if (isReadonlyError(error)) return false;
    throw error;
  }
}
