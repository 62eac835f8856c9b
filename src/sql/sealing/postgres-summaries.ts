/**
 * How an overlay's (compaction's) summary is stored on Postgres and read back (encryption at rest, sealing.ts):
 * sealed under the session owner's key, bound to the session and the overlay's id, with the flag column false; or
 * as free text (sql/engines/postgres/text.ts, which encodes clear text that starts like sealed content, so an unflagged
 * value that starts `~sealed` is always sealed). Every write of a summary takes its form here and every read of
 * one is opened here.
 */
import type { StoredCompaction } from "../../contract/message.js";
import { SessionError } from "../../errors.js";
import { type CompactionRow, toStoredCompaction } from "../../store/compactions.js";
import { encode } from "../../store/crypto/row-codec.js";
import { isSealed } from "../../store/crypto/seal.js";
import { chooseOverlays, type OverlaySpan } from "../../store/overlays.js";
import type { Query } from "../engines/postgres/client.js";
import { decodeContent, encodeContent } from "../engines/postgres/text.js";
import type { ClearGuard, KeyedTables, KeyGuard } from "./postgres.js";
import { importKey } from "./postgres-clear-owners.js";

/** A compaction row as Postgres stores it: the summary may be encoded (text.ts) or sealed. */
export interface StoredCompactionRow extends CompactionRow {
  summary_json: boolean;
}

/** A summary's columns (`summary`, `summary_json`) and the sealed text when it is sealed (null: in clear). */
export interface StoredSummary {
  content: string;
  json: boolean;
  sealed: string | null;
  /** Sealed: the owner's key check it was sealed under, which its write requires (key-guard.ts) as a message's. */
  guard?: KeyGuard | undefined;
  /** In clear in a keyring store: the owner found, which its write requires as a message's. */
  clear?: ClearGuard | undefined;
}

/**
 * The summary columns of an overlay of `sessionId`: sealed for an owner with a key, else encoded free text; in a
 * store with a keyring, with what its write's statement requires (sql/engines/postgres/owner-guard.ts guardSql).
 */
export async function storedSummary(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  overlayId: string,
  summary: string,
): Promise<StoredSummary> {
  const { keys } = t;
  if (!keys) return { ...encodeContent(summary), sealed: null };
  const { value, guard } = await keys.guarded(query, (k) => {
    const sealed = k.sealSummary(sessionId, overlayId, summary);
    return { sealed, owner: sealed === null ? k.ownerOf(sessionId) : null };
  });
  if (value.sealed !== null) return { content: value.sealed, json: false, sealed: value.sealed, guard };
  // Guarded as a message in clear is (stored-form.ts).
  const clear = keys.noteClear(sessionId, value.owner);
  return { ...encodeContent(summary), sealed: null, clear };
}

/**
 * The summaries' columns of a batch of `sessionId`'s overlays (an import): one look-up of the session's key (its
 * owner and check read again, not taken from this process's cache: the rows carry no guard, as stored-form.ts
 * formsOf's; in clear, the owner held without a key, clear-owners.ts), then each summary's form without a statement.
 */
export async function summaryForms(
  query: Query,
  t: KeyedTables,
  sessionId: string,
): Promise<(overlayId: string, summary: string) => StoredSummary> {
  const key = await importKey(query, t, sessionId);
  if (!key) return (_id, summary) => ({ ...encodeContent(summary), sealed: null });
  return (id, summary) => {
    const sealed = encode("overlay", key, { sessionId, id }, summary);
    return { content: sealed, json: false, sealed };
  };
}

/** Opens sealed summaries of `sessionId` (`DECRYPT_FAILED` without the owner's key or the store's keyring). */
export async function openSummaries(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  sealed: readonly { id: string; summary: string }[],
): Promise<string[]> {
  if (sealed.length === 0) return [];
  const { keys } = t;
  if (!keys) {
    throw new SessionError(
      "DECRYPT_FAILED",
      "This store holds encrypted overlay summaries: open it with the keyring they were written with",
    );
  }
  return keys.run(query, (k) => sealed.map(({ id, summary }) => k.open(sessionId, summary, id, "overlay")));
}

/** Compaction rows of `sessionId` in the public shape: summaries decoded, or opened when sealed. */
export async function compactionsOf(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  rows: readonly StoredCompactionRow[],
): Promise<StoredCompaction[]> {
  const isSealedRow = (row: StoredCompactionRow) => !row.summary_json && isSealed(row.summary);
  const opened = await openSummaries(query, t, sessionId, rows.filter(isSealedRow));
  let next = 0;
  return rows.map(({ summary_json, ...row }) => {
    const summary = isSealedRow({ ...row, summary_json })
      ? opened[next++]!
      : decodeContent(row.summary, summary_json);
    return toStoredCompaction({ ...row, summary });
  });
}

/**
 * The overlays {@link chooseOverlays} picks among `spans` (each with its row's JSON as read, `body`), in path order,
 * with only the chosen ones' summaries decoded or opened: a path may carry many superseded overlays, and opening a
 * sealed summary costs a decryption.
 */
export async function chooseAndOpen<S extends OverlaySpan & { body: string }>(
  query: Query,
  t: KeyedTables,
  sessionId: string,
  spans: readonly S[],
): Promise<(S & { compaction: StoredCompaction })[]> {
  const chosen = chooseOverlays(spans);
  const rows = chosen.map((span) => JSON.parse(span.body) as StoredCompactionRow);
  const compactions = await compactionsOf(query, t, sessionId, rows);
  return chosen.map((span, i) => ({ ...span, compaction: compactions[i]! }));
}
