/**
 * Sealed facts (docs/FACTS.md, "Encryption"): a fact of an owner with a key keeps its text and subject sealed under
 * the owner's key (the row codec's "fact" kind, store/crypto/row-codec.ts), bound to its scope and id, so a row copied to another scope or id
 * does not open; the engines index it by the owner's blind tokens (search/fact-index.ts), never by its words.
 * Shared by both SQL engines (their statements seal, sql-facts.ts opens).
 */
import { SessionError } from "../errors.js";
import type { ContentKeys } from "./crypto/content-keys.js";
import { decode, decodeWith, encode } from "./crypto/row-codec.js";
import { type OwnerWrite, ownerWrite } from "./crypto/write-guard.js";
import { factSearchText, type ScopeKey } from "./facts.js";

/**
 * The key a write of the scope's facts seals with and its guard (crypto/write-guard.ts): its owner's, or its
 * session's owner's. Looked up in the write's transaction (sql/facts/steps.ts FactStatements.writeKey).
 */
export function factWrite(keys: ContentKeys | undefined, scope: ScopeKey, where: string): OwnerWrite {
  const owner = scope.owner ?? (keys && scope.sessionId !== null ? keys.ownerOf(scope.sessionId) : null);
  return ownerWrite(keys, owner, where);
}

/** What a fact write seals: its text and subject. */
export interface FactWords {
  text: string;
  about: string | null;
}

/** A fact's stored columns: its text (sealed, or in clear), subject (null when sealed) and length when sealed. */
export interface StoredFactText {
  text: string;
  about: string | null;
  /** Its search text's length in code points when sealed (ranking reads it), null in clear. */
  sealedChars: number | null;
}

/** The stored form of a fact of scope key `scope`: sealed under `key` (null: in clear). */
export function storedFactText(
  key: Uint8Array | null,
  scope: string,
  id: string,
  fact: FactWords,
): StoredFactText {
  if (key === null) return { text: fact.text, about: fact.about, sealedChars: null };
  return {
    text: encode("fact", key, { scope, id }, JSON.stringify([fact.text, fact.about])),
    about: null,
    // In code points, as SQLite's and Postgres's length() count the text of a fact in clear.
    sealedChars: [...factSearchText(fact)].length,
  };
}

/**
 * A sealed fact's text and subject, opened with the owner's key its content names (current or previous).
 * `DECRYPT_FAILED` without such a key, for changed bytes, or for a row moved to another scope or id.
 */
export function openFact(
  keys: ContentKeys,
  owner: string | null,
  scope: string,
  id: string,
  stored: string,
): FactWords {
  return wordsOf(decode("fact", keys, owner, { scope, id }, stored), scope, id);
}

/** {@link openFact} with the key that sealed it (a rotation knows it). */
export function openFactWith(key: Uint8Array, scope: string, id: string, stored: string): FactWords {
  return wordsOf(decodeWith("fact", key, { scope, id }, stored), scope, id);
}

// The text and subject a fact opened to (their JSON pair).
function wordsOf(json: string, scope: string, id: string): FactWords {
  let words: unknown;
  try {
    words = JSON.parse(json);
  } catch {
    words = null;
  }
  const [text, about] = Array.isArray(words) ? words : [];
  if (typeof text !== "string" || (about !== null && typeof about !== "string")) {
    throw new SessionError("DECRYPT_FAILED", `${what(scope, id)} opened to something that is no fact`);
  }
  return { text, about };
}

function what(scope: string, id: string): string {
  return `Fact "${id}" of scope "${scope}"`;
}
