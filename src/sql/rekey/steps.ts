/**
 * Key rotation on the SQL engines (docs/PRIVACY.md, "Key rotation"), written once over each engine's table
 * (rekey-table.ts): re-seals an owner's messages under the keyring's current key in bounded batches, one transaction
 * each, walking the owner's sessions by head number and their messages by id (the unique index), with the cursor
 * recorded in the same transaction. A crash or an abort leaves every row under the old key or the new one, both
 * readable (and on Postgres searchable), and the next run resumes at the cursor. The rotation ends only when no row
 * of the owner is sealed under another key; its summaries, blocks and entries are re-sealed in the transaction that
 * ends it (finish.ts). With `sealClear` the walk seals the owner's messages in clear too, and the end its
 * other rows in clear (clear.ts). The outer loop is store/crypto/rekey-run.ts.
 */
import { SessionError } from "../../errors.js";
import { checkOf } from "../../store/crypto/owner-keys.js";
import { parseRekeyOptions, type RekeyOptions, type RekeyReport } from "../../store/crypto/rekey-options.js";
import { type RekeyBatch, requireKeyring, runRekey } from "../../store/crypto/rekey-run.js";
import type { RotationStart } from "../../store/crypto/rotation.js";
import { keyId } from "../../store/crypto/seal.js";
import { parseOwner } from "../../store/owner.js";
import { countOf, type Program, type Statement } from "../program.js";
import { finish } from "./finish.js";
import type { Cursor, OwnedSession, RekeyTable, Rotation } from "./table.js";

/** How an engine runs a rotation: its start, and its programs over its table. */
export interface RekeyEngine {
  /** The store's keys: a rotation needs a keyring. */
  readonly keys: { readonly keyed: boolean } | undefined;
  /**
   * Starts (or resumes) the owner's rotation in a transaction: store/crypto/rotation.ts startRotation, or
   * startSealing when `sealClear`.
   */
  start(owner: string, sealClear: boolean): RotationStart | Promise<RotationStart>;
  /** Runs a program over the engine's table; `write`: in a transaction of its own. */
  run<T>(program: (s: RekeyTable) => Program<T>, write: boolean): T | Promise<T>;
}

// The cursor's session past the owner's last: the walk is over.
const END = Number.MAX_SAFE_INTEGER;

/** Re-seals `owner`'s messages under the keyring's current key; see {@link RekeyOptions} and docs/PRIVACY.md. */
export async function rekeyWith(
  engine: RekeyEngine,
  owner: unknown,
  options: RekeyOptions,
): Promise<RekeyReport> {
  const checked = parseOwner(owner);
  const { batchSize, signal, onProgress, sealClear } = parseRekeyOptions(options);
  requireKeyring(engine.keys);
  signal?.throwIfAborted();
  // A synchronous engine's start is not awaited (nor are its batches, rekey-run.ts): its first batch runs before
  // an abort signalled meanwhile is seen.
  const started = engine.start(checked, sealClear);
  const start = started instanceof Promise ? await started : started;
  const at: Rotation = {
    owner: checked,
    ownerHash: start.ownerHash,
    key: start.key,
    id: keyId(start.key),
    sealClear,
  };
  return runRekey(
    { owner: checked, keyId: at.id, resumed: start.resumed },
    {
      total: () => engine.run((s) => total(s, checked), false),
      examinedBefore: () => engine.run((s) => examinedBefore(s, at), false),
      batch: (size) => engine.run((s) => resealBatch(s, at, size), true),
      finish: () => engine.run((s) => finish(s, at), true),
    },
    { batchSize, signal, onProgress },
  );
}

function* total(s: RekeyTable, owner: string): Program<number> {
  return countOf(yield s.count(owner));
}

/** The rows an earlier run walked already (for progress): sessions before the cursor's and ids up to it. */
function* examinedBefore(s: RekeyTable, at: Rotation): Program<number> {
  const [cursor] = (yield s.readRotation(at.ownerHash)) as Cursor[];
  if (!cursor) return 0;
  return countOf(yield s.examined(at.owner, cursor));
}

/** One batch, inside its transaction: up to `size` rows after the cursor re-sealed, the cursor moved past them. */
function* resealBatch(s: RekeyTable, at: Rotation, size: number): Program<RekeyBatch> {
  const read = s.lockRotation(at.ownerHash) ?? s.readRotation(at.ownerHash);
  const [cursor] = (yield read) as Cursor[];
  // Another run finished the rotation meanwhile (or the owner was erased): the final check decides.
  if (!cursor) return { examined: 0, resealed: 0, end: true };
  yield* requireKey(s, at);
  let session = Number(cursor.session_num) === 0 ? null : yield* sessionOf(s.sessionAt(cursor.session_num));
  let after = cursor.message_id;
  if (session === null) {
    session = yield* sessionOf(s.nextSession(at.owner, cursor.session_num));
    after = null;
  }
  const batch: RekeyBatch = { examined: 0, resealed: 0, end: false };
  while (session !== null && batch.examined < size) {
    const rows = yield s.rowsAfter(session, after, size - batch.examined);
    batch.examined += rows.length;
    batch.resealed += yield* s.resealMessages(at, session, rows);
    after = (rows.at(-1)?.id as string | undefined) ?? after;
    if (batch.examined < size) {
      session = yield* sessionOf(s.nextSession(at.owner, session.num));
      after = null;
    }
  }
  batch.end = session === null;
  yield s.moveCursor(at.ownerHash, session?.num ?? END, after);
  return batch;
}

function* sessionOf(read: Statement): Program<OwnedSession | null> {
  const [row] = (yield read) as OwnedSession[];
  return row ?? null;
}

/** `CONFLICT` unless the owner's recorded key is still the one this rotation seals under (where the engine reads it). */
function* requireKey(s: RekeyTable, at: Rotation): Program<void> {
  const read = s.keyCheck(at.ownerHash);
  if (read === null) return;
  const [row] = yield read;
  if (row?.key_check !== checkOf(at.key)) {
    throw new SessionError("CONFLICT", `The key of owner "${at.owner}" changed during its rotation`);
  }
}
