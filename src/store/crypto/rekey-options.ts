/**
 * What a key rotation (`store.rekey`, docs/PRIVACY.md "Key rotation") takes and answers, and the check of its
 * options.
 */
import { z } from "zod";
import { parseInput } from "../../schema/parse.js";
import { func, numberWhere } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";

/** How far a rotation got, after each batch. */
export interface RekeyProgress {
  owner: string;
  /** Messages of the owner walked so far (by this run and, resuming, the runs before it). */
  done: number;
  /** Messages of the owner when the run started. */
  total: number;
  /** Messages this run re-sealed under the new key. */
  resealed: number;
}

/** Options of `store.rekey(owner, options)`. */
export interface RekeyOptions {
  /** Messages re-sealed per write transaction (default 200, at most 10000). */
  batchSize?: number | undefined;
  /** Stops the rotation between two batches (it throws the signal's reason); a later run resumes it. */
  signal?: AbortSignal | undefined;
  /** Called after each batch. */
  onProgress?: ((progress: RekeyProgress) => void) | undefined;
  /**
   * Also seals the owner's rows still in clear (written before it had a key) under its current key: messages (their
   * index becoming blind), overlay summaries, blocks, entries, facts and kept stream chunks. With it an owner whose
   * key is the recorded one (or has none recorded yet) is sealed without a rotation (docs/PRIVACY.md, "Sealing an
   * owner's clear history").
   */
  sealClear?: boolean | undefined;
}

/**
 * What a finished rotation answers: every message of the owner is sealed under the key `keyId` names (with
 * `sealClear`, those that were in clear too; without it, rows in clear are left so).
 */
export interface RekeyReport {
  owner: string;
  /** The id sealed content names the new key by (a keyed fingerprint, never the key). */
  keyId: string;
  /** Messages of the owner when the run started. */
  total: number;
  /** Messages this run re-sealed (with `sealClear`, or sealed from clear). */
  resealed: number;
  /** True when the rotation was under way already (an earlier run, or a write under the new key, started it). */
  resumed: boolean;
}

const rekeyOptions = z.object(
  {
    batchSize: numberWhere(
      "batchSize must be a whole number from 1 to 10000",
      (n) => Number.isSafeInteger(n) && n >= 1 && n <= 10_000,
    ).default(200),
    signal: z.instanceof(AbortSignal, rule("signal must be an AbortSignal")).optional(),
    onProgress: func<(progress: RekeyProgress) => void>("onProgress must be a function").optional(),
    sealClear: z.boolean(rule("sealClear must be a boolean")).optional(),
  },
  rule("rekey options must be an object"),
);

/** The options with their defaults; `INVALID_ARGUMENT` naming the field that is wrong. */
export function parseRekeyOptions(options: unknown): {
  batchSize: number;
  signal: AbortSignal | undefined;
  onProgress: RekeyOptions["onProgress"];
  sealClear: boolean;
} {
  const { batchSize, signal, onProgress, sealClear } = parseInput(rekeyOptions, options);
  return { batchSize, signal, onProgress, sealClear: sealClear === true };
}
