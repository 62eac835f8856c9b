/**
 * The words a fact is indexed by (docs/FACTS.md, "Encryption"): its folded words in clear, the owner's blind tokens
 * when sealed (store/fact-sealing.ts seals its text), so a sealed fact's index holds no word. Here, above the store,
 * because the tokens are search's.
 */
import type { FactWords } from "../store/fact-sealing.js";
import { factSearchText } from "../store/facts.js";
import { type BlindTokens, blindTokensOf } from "./blind-tokens.js";
import { indexTokens, searchableText } from "./tokens.js";

/** The words a fact is indexed by: the owner's blind tokens when sealed under `key`, else its folded words. */
export function factIndexText(key: Uint8Array | null, fact: FactWords): string {
  const text = factSearchText(fact);
  return key === null ? searchableText(text) : blindTokensOf(key).text(indexTokens(text));
}

/** The blind tokens a fact's words are indexed by under `key`, or undefined in clear (Postgres's toTsvector). */
export function factBlind(key: Uint8Array | null): BlindTokens | undefined {
  return key === null ? undefined : blindTokensOf(key);
}
