/**
 * What one SQL engine hands the fact store of both engines (src/facts/sql-facts.ts): its statement table, its runner,
 * and what it does its own way (search candidates, reading a session's messages, the keys), each engine's in
 * sqlite-engine.ts and postgres-engine.ts.
 */
import type { EntryCandidates } from "../../context/store-base.js";
import type { LearnableMessage } from "../../contract/facts.js";
import type { BlindTokens } from "../../search/blind-tokens.js";
import type { QueryTerm } from "../../search/query.js";
import type { ContentKeys } from "../../store/crypto/content-keys.js";
import type { FactFilter } from "../../store/facts.js";
import type { Program } from "../program.js";
import type { StoredFact } from "./reads.js";
import type { FactStatements } from "./steps.js";

/** How one SQL engine runs the fact programs, and what it does its own way. */
export interface FactEngine {
  readonly statements: FactStatements;
  /** Throws `CLOSED` once the store is closed (an engine whose statements refuse by then does nothing). */
  assertOpen(): void;
  /** Runs a program, in one write transaction when `transaction`. */
  run<T>(program: () => Program<T>, transaction: boolean): Promise<T>;
  /**
   * Each term's newest matching facts of the scope passing `filter` (at most `cap`), their lengths, the count;
   * `blinds`: the scope's owner's blind tokens, which each term also matches as (its sealed facts' index).
   */
  candidates(
    scope: string,
    terms: QueryTerm[],
    cap: number,
    filter: FactFilter,
    blinds: readonly BlindTokens[],
  ): Promise<EntryCandidates | undefined>;
  /**
   * The stored facts of these seqs in the scope, read the engine's own way (SQLite: rows as arrays, which a search's
   * candidates are read in twice as fast as the program's row objects); none: the program of fact-reads.ts.
   */
  readSeqs?(scope: string, seqs: readonly number[]): Promise<StoredFact[]>;
  /** A session's messages after `after` in store order, their text opened. */
  unlearned(sessionId: string, after: number, limit: number): Promise<LearnableMessage[]>;
  /** Runs `use` with the store's keys (on Postgres: loading the key records they miss, and running it again). */
  withKeys<T>(use: (keys: ContentKeys) => T): Promise<T>;
}
