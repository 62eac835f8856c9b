/**
 * What a backend gives its store's ContentKeys (content-keys.ts): the owner, key-check and rotation rows it
 * reads synchronously, and what a write sealed under a check it did not read carries to its statement.
 */

/** What a backend answers synchronously for its ContentKeys. */
export interface KeyRecords {
  /** The owner a session is registered with, or null. */
  ownerOf(sessionId: string): string | null;
  /** The key check recorded for an owner's hash (see seal.ts keyCheck), or undefined when none is. */
  readCheck(ownerHash: string): string | undefined;
  /**
   * Records an owner's key check unless one is (from then on its content is never written in clear) and answers
   * the check recorded now: another writer's, when it recorded first.
   */
  recordCheck(ownerHash: string, check: string): string;
  /**
   * The session's owner now and the key check recorded for `owner` (the one cached for it; its hash `ownerHash`),
   * in one read: a write of a cached owner finds the session deleted and created again for another owner without a
   * read more. A backend whose write statements compare the session's owner themselves (Postgres, key-guard.ts) may
   * answer `owner` unread while it knows the check without reading it. Without it, the check is read alone.
   */
  readOwnerCheck?(
    sessionId: string,
    owner: string,
    ownerHash: string,
  ): { owner: string | null; check: string | undefined };
  /** Removes an owner's key check and any rotation of it (its key was destroyed). */
  deleteCheck(ownerHash: string): void;
  /** The check of the key an unfinished rotation moves the owner's rows from, or undefined (none under way). */
  readRotation?(ownerHash: string): string | undefined;
  /**
   * {@link readCheck} and {@link readRotation} at once (a search reads both): one statement where a backend has
   * it, else the two are read in turn.
   */
  readChecks?(ownerHash: string): { check: string | undefined; from: string | undefined };
  /**
   * Starts a rotation, in one transaction: the recorded check becomes `to` if it is still `from`, and `from` is
   * kept as the key being rotated from. Answers the check recorded now. `CONFLICT` while another is under way.
   * A backend without it cannot rotate keys.
   */
  beginRotation?(ownerHash: string, from: string, to: string): string;
}

/** A message's content as a store writes it: the text for the content column and its content hash. */
export interface SealedWrite {
  content: string;
  hash: string;
  /** The key that sealed it: a backend that indexes the message as blind tokens derives them from it. */
  key: Uint8Array;
}

/** The key check a sealed write relied on without reading it: its statement requires it to be the recorded one. */
export interface KeyGuard {
  ownerHash: string;
  check: string;
}

/** A {@link KeyGuard} with the session's cached owner, which the write's statement requires to be still its owner. */
export interface WriteGuard extends KeyGuard {
  owner: string;
}
