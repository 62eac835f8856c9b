/**
 * How a message's content is stored on Postgres and read back (encryption at rest, postgres.ts): sealed under the
 * session owner's key, with a keyed content hash and a search vector of blind tokens (search/blind-tokens.ts), or
 * as it is. Every row write takes its form here and every read of `content` opens it here.
 */

import type { SessionMessage } from "../../contract/message.js";
import { SessionError } from "../../errors.js";
import { type BlindTokens, blindTokensOf } from "../../search/blind-tokens.js";
import { withTimeTokens } from "../../search/date-terms.js";
import type { SealedWrite } from "../../store/crypto/content-keys.js";
import { encode } from "../../store/crypto/row-codec.js";
import { isSealed, refusePayloadPointer, sealedHash } from "../../store/crypto/seal.js";
import { type Attachment, type Offloaded, offloadMessage } from "../../store/media/offload.js";
import { contentHash } from "../../store/write-policy.js";
import type { RowWritten, Written } from "../../store/written.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { sessionLexeme, toTsvector } from "../engines/postgres/fts.js";
import { writeStored } from "../media/postgres.js";
import type { ClearGuard, KeyedTables, KeyGuard } from "./postgres.js";
import { importKey } from "./postgres-clear-owners.js";

/** A message's content column and content hash, and whether it is sealed. */
export interface StoredForm {
  /** The JSON the row holds before sealing (payloads as pointers when offloaded): its size is the row's `bytes`. */
  json: string;
  content: string;
  hash: string;
  sealed: boolean;
  /**
   * Sealed content: the owner's key check it was sealed under, which the write requires to be still recorded (and
   * the session to be still that owner's).
   */
  guard?: KeyGuard | undefined;
  /**
   * Content in clear in a store with a keyring: the session's owner found with no recorded key check
   * (or none), which the write requires to be still so (postgres-key-guard.ts); refused, it is looked up again.
   */
  clear?: ClearGuard | undefined;
  /** The owner's blind tokens a sealed message is indexed with (its words never reach the index). */
  blind?: BlindTokens;
}

/** The JSON as it is, with its SHA-256. */
function clearForm(json: string): StoredForm {
  return { json, content: json, hash: contentHash(json), sealed: false };
}

/** The JSON sealed (`sealed`), indexed with the blind tokens of the key that sealed it. */
function sealedForm(json: string, { content, hash, key }: SealedWrite, guard?: KeyGuard): StoredForm {
  return { json, content, hash, sealed: true, blind: blindTokensOf(key), guard };
}

/**
 * The guard of a write in clear of `sessionId` that reads nothing (a write of this process found the session in
 * clear, postgres.ts knownClear), or undefined.
 */
function knownClear(t: KeyedTables, sessionId: string): ClearGuard | undefined {
  return t.keys?.knownClear(sessionId);
}

/**
 * The JSON in clear, guarded by the owner `owner` the look-up found (on a cluster an append's delegated call checks
 * the guard, citus/append-function.ts; other writes call the coordinator's owner guard, owner-guard.ts).
 */
function lookedUpClear(t: KeyedTables, sessionId: string, json: string, owner: string | null): StoredForm {
  const form = clearForm(json);
  return t.keys ? { ...form, clear: t.keys.noteClear(sessionId, owner) } : form;
}

/**
 * The content column and hash of a message of `sessionId`: sealed under its owner's key, or the JSON as it is.
 * `pointers`: a JSON whose payloads were not offloaded (messageForm), whose pointer look-alikes are refused when it
 * is sealed.
 */
export async function storedForm(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  messageId: string,
  json: string,
  pointers = false,
): Promise<StoredForm> {
  const { keys } = t;
  if (!keys) return clearForm(json);
  const clear = knownClear(t, sessionId);
  if (clear) return { ...clearForm(json), clear };
  const { value, guard } = await keys.guarded(query, (k) => {
    if (pointers && k.keyFor(sessionId)) refusePayloadPointer(sessionId, json);
    const sealed = k.seal(sessionId, messageId, json);
    return { sealed, owner: sealed ? null : k.ownerOf(sessionId) };
  });
  if (value.sealed) return sealedForm(json, value.sealed, guard);
  return lookedUpClear(t, sessionId, json, value.owner);
}

/** A message ready for its row: its stored form and the payloads offloaded from it. */
export interface MessageForm {
  form: StoredForm;
  attachments: Attachment[];
}

/**
 * A message of `sessionId` as its row stores it: payloads offloaded and the rest in clear, or, for an encrypted
 * owner, media kept inline and the whole sealed (payload rows are shared and stored in clear). A string that reads
 * as a payload pointer cannot be stored for an encrypted owner: it would be taken for one on reading.
 */
export async function messageForm(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  message: SessionMessage,
  json: string,
): Promise<MessageForm> {
  const { keys } = t;
  let offloaded: Offloaded | undefined;
  // Known in clear: no look-up, unless payloads are offloaded (a refused guard seals the JSON its form holds, which
  // must then be the message's whole JSON; see postgres-key-guard.ts resealed).
  const clear = knownClear(t, sessionId);
  if (clear) {
    offloaded = offloadMessage(message, json);
    if (offloaded.attachments.length === 0)
      return { form: { ...clearForm(offloaded.content), clear }, attachments: [] };
  }
  if (!keys) {
    offloaded = offloadMessage(message, json);
    return { form: clearForm(offloaded.content), attachments: offloaded.attachments };
  }
  const { value, guard } = await keys.guarded(query, (k) => {
    if (!k.keyFor(sessionId)) return { sealed: null, owner: k.ownerOf(sessionId) };
    refusePayloadPointer(sessionId, json);
    return { sealed: k.seal(sessionId, message.id, json), owner: null };
  });
  if (value.sealed) return { form: sealedForm(json, value.sealed, guard), attachments: [] };
  offloaded ??= offloadMessage(message, json);
  const { content, attachments } = offloaded;
  const form = lookedUpClear(t, sessionId, content, value.owner);
  return { form: attachments.length === 0 ? form : clearForm(content), attachments };
}

/**
 * The search vector a row of a message with `text` stores (a `tsvector` literal, or null): for sealed content its
 * owner's blind tokens, one per word in the words' positions, since its words would be plaintext in the index (none
 * without them, which a sealed form always has).
 */
export function searchVector(
  text: string,
  sessionId: string,
  form: StoredForm,
  time: Date | string | number | null,
): string | null {
  if (form.sealed && form.blind === undefined) return null;
  // The message's time tokens go in with its words, blinded with them for a sealed owner (search/date-terms.ts).
  return toTsvector(withTimeTokens(text, time), sessionLexeme(sessionId), form.blind);
}

/**
 * How the messages of `sessionId` are stored (an import's batch): one look-up of the session's key (its owner and
 * check read again, not taken from this process's cache: the rows carry no guard; in clear, the owner held without
 * a key until the batch commits, postgres-clear-owners.ts), then the form of each message without a statement.
 */
export async function formsOf(
  query: Query,
  t: KeyedTables,
  sessionId: string,
): Promise<(messageId: string, json: string) => StoredForm> {
  const key = await importKey(query, t, sessionId);
  if (!key) return (_id, json) => clearForm(json);
  return (id, json) =>
    sealedForm(json, {
      content: encode("message", key, { sessionId, id }, json),
      hash: sealedHash(key, json),
      key,
    });
}

/**
 * Stored contents of rows of `sessionId` with the sealed ones opened (`DECRYPT_FAILED` without the right key, or
 * on a store opened without its keyring); `ids`, where the read knows them, must be the ids the content was sealed
 * for. Contents with nothing sealed come back as they are, without a statement.
 */
export async function openContents<C extends string | null>(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  contents: readonly C[],
  ids?: readonly (string | undefined)[],
): Promise<C[]> {
  if (!contents.some((c) => c !== null && isSealed(c))) return [...contents];
  const { keys } = t;
  if (!keys) {
    throw new SessionError(
      "DECRYPT_FAILED",
      "This store holds encrypted messages: open it with the keyring they were written with",
    );
  }
  return keys.run(query, (k) =>
    contents.map((c, i) => (c !== null && isSealed(c) ? (k.open(sessionId, c, ids?.[i]) as C) : c)),
  );
}

/** One stored content of `sessionId`, opened when sealed (see {@link openContents}). */
export async function openContent(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  content: string,
  id?: string,
): Promise<string> {
  if (!isSealed(content)) return content;
  const [opened] = await openContents(query, t, sessionId, [content], [id]);
  return opened!;
}

/**
 * Runs a write of `message` with its payloads linked in the same transaction (sql/media/postgres.ts
 * writeWithAttachments), its stored form made first.
 */
export async function writeWithAttachments<T extends object>(
  executor: Executor,
  t: KeyedTables,
  sessionId: string,
  message: SessionMessage,
  json: string,
  replaces: boolean,
  write: (form: StoredForm, executor: Executor) => Promise<RowWritten<T, string>>,
): Promise<Written<T>> {
  // An encrypted owner's message is sealed whole, its media inline (postgres-stored-form.ts): no payload rows.
  const stored = await messageForm(executor.query, t, sessionId, message, json);
  return writeStored(executor, t, sessionId, stored, replaces, write);
}
