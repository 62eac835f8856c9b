/**
 * The walk of a key rotation (docs/PRIVACY.md, "Key rotation"), the same on every backend: batches re-seal the
 * owner's rows after a recorded cursor, progress is reported after each, an abort stops between two, and the
 * rotation ends only when the backend's final check finds no row of the owner under another key.
 */
import { SessionError } from "../../errors.js";
import type { RekeyProgress, RekeyReport } from "./rekey-options.js";

// A row found under another key after a full walk sends the walk round again: one sealed in the first format
// (no key id) under the current key, or written by a process of an earlier release, which kept its verified key
// without reading the recorded check again. More rounds than this mean something keeps writing under another key.
const MAX_ROUNDS = 3;

/** What one batch did, inside its own transaction. */
export interface RekeyBatch {
  /** Rows walked. */
  examined: number;
  /** Rows re-sealed under the new key. */
  resealed: number;
  /** True when the walk passed the owner's last row. */
  end: boolean;
}

/** A backend's steps of a started rotation; each runs in a transaction of its own. */
export interface RekeySteps {
  /** The owner's messages now. */
  total(): number | Promise<number>;
  /** The rows an earlier run walked already (for progress; 0 when not resuming). */
  examinedBefore(): number | Promise<number>;
  /** Re-seals up to `size` rows after the cursor and moves the cursor past them. */
  batch(size: number): RekeyBatch | Promise<RekeyBatch>;
  /** True when no row of the owner is under another key (the rotation is then ended); else the walk restarts. */
  finish(): boolean | Promise<boolean>;
}

/** Runs a started rotation's batches to its end (see the module comment). */
export async function runRekey(
  report: { owner: string; keyId: string; resumed: boolean },
  steps: RekeySteps,
  options: {
    batchSize: number;
    signal: AbortSignal | undefined;
    onProgress?: ((p: RekeyProgress) => void) | undefined;
  },
): Promise<RekeyReport> {
  const { owner } = report;
  const { batchSize, signal, onProgress } = options;
  // A synchronous backend's answers are not awaited: its first batch then runs before an abort signalled
  // meanwhile is seen (an abort stops the rotation after the batch under way).
  const counted = steps.total();
  const total = typeof counted === "number" ? counted : await counted;
  const before = report.resumed ? steps.examinedBefore() : 0;
  let done = typeof before === "number" ? before : await before;
  let resealed = 0;
  for (let round = 1; ; ) {
    signal?.throwIfAborted();
    const walked = steps.batch(batchSize);
    const batch = walked instanceof Promise ? await walked : walked;
    done += batch.examined;
    resealed += batch.resealed;
    onProgress?.({ owner, done: Math.min(done, total), total, resealed });
    if (batch.end) {
      const finished = steps.finish();
      if (typeof finished === "boolean" ? finished : await finished) break;
      if (++round > MAX_ROUNDS) {
        throw new SessionError("CONFLICT", `Rows of owner "${owner}" keep being written under another key`);
      }
    }
    // The store's other work (reads, appends of this process) runs between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { owner, keyId: report.keyId, total, resealed, resumed: report.resumed };
}

/** `INVALID_ARGUMENT` unless the store was opened with a keyring. */
export function requireKeyring<K extends { keyed: boolean }>(keys: K | undefined): K {
  // A store opened without a keyring has keys that answer none (NO_KEYRING): it refuses, it cannot rotate.
  if (keys === undefined || !keys.keyed) {
    throw new SessionError("INVALID_ARGUMENT", "A key rotation needs a store opened with a keyring", {
      issues: [{ path: "keyring", rule: "required" }],
    });
  }
  return keys;
}
