/**
 * The end of a key rotation (rekey.ts), in one transaction after a full walk: the owner's overlay summaries are
 * re-sealed (an owner has few, one per compaction), then the rotation ends when no message of the owner is sealed
 * under another key (each row's first bytes name its key) and its context blocks, search entries and facts sealed
 * (and session names, and the storage rooms' rows: src/sql/rooms/, a LangGraph store's items and the checkpoint rows of its sessions among them) under a previous key are re-sealed with it, else the cursor
 * goes back to the start for another round. Blocks, entries and facts are found by the key id their sealed content
 * names (which rows share a key is visible anyway): an owner holds few of them, next to its messages. With
 * `sealClear` a message left in clear also sends the walk round again, and the owner's other rows in clear are sealed in the transaction that ends it (clear.ts).
 */
import { ownerKeys } from "../../store/crypto/owner-keys.js";
import { decodeWith, encode } from "../../store/crypto/row-codec.js";
import { keyId, sealedStart } from "../../store/crypto/seal.js";
import { openFactWith } from "../../store/fact-sealing.js";
import { countOf, type Program } from "../program.js";
import { noClearLeft, sealClearRows } from "./clear.js";
import type { NameRow, OwnedSession, RekeyTable, Rotation, SealedFactRow, SummaryRow } from "./table.js";

/** True when the rotation ended; false when rows under another key remain and the walk starts again. */
export function* finish(s: RekeyTable, at: Rotation): Program<boolean> {
  // Locked (where runs can interleave) so that a concurrent run's batch and this check take turns.
  const lock = s.lockRotation(at.ownerHash);
  const locked = lock === null ? null : yield lock;
  yield* resealSummaries(s, at);
  if (countOf(yield s.underOtherKeys(at.owner, sealedStart(at.id))) === 0 && (yield* noClearLeft(s, at))) {
    yield* resealContext(s, at);
    if (at.sealClear) yield* sealClearRows(s, at);
    yield s.endRotation(at.ownerHash);
    return true;
  }
  const rotation = locked ?? (yield s.readRotation(at.ownerHash));
  if (rotation.length === 0) yield s.restartRotation(at.ownerHash);
  yield s.moveCursor(at.ownerHash, 0, null);
  return false;
}

/**
 * Re-seals the owner's sealed summaries not under the rotation's key. On Postgres a summary written meanwhile (its
 * stored text changed) is left as its writer sealed it.
 */
function* resealSummaries(s: RekeyTable, at: Rotation): Program<void> {
  const rows = (yield s.summaries(at.owner, sealedStart(at.id))) as SummaryRow[];
  if (rows.length === 0) return;
  const sealed = yield* s.sealSummaries(at, rows);
  // One statement per summary (on Citus the session names the shard): they are few.
  for (const [i, row] of rows.entries()) yield s.writeSummary(row, sealed[i]!);
}

/**
 * Re-seals the owner's blocks, entries, facts, session names and the rooms' rows (each room's pass, in the rooms'
 * order) sealed under a previous key.
 */
function* resealContext(s: RekeyTable, at: Rotation): Program<void> {
  const previousKeys = ownerKeys(s.keyring, at.owner).previous;
  const sessions =
    previousKeys.length === 0
      ? []
      : ((yield s.ownerSessions(at.owner)) as OwnedSession[]).map((r) => r.session_id);
  for (const previous of previousKeys) {
    const start = sealedStart(keyId(previous));
    for (const row of yield s.blocksUnder(start)) yield* s.resealBlock(row);
    for (const row of yield s.entriesUnder(start)) yield* s.resealEntry(row);
    // A fact names the key that sealed it, which is this one: opened with it, sealed under the new key.
    for (const row of (yield s.factsUnder(start)) as SealedFactRow[]) {
      yield s.writeFact(row, at.key, openFactWith(previous, row.scope, row.id, row.text));
    }
    for (const row of (yield s.namesUnder(at.owner, start)) as NameRow[]) {
      const binding = { sessionId: row.id };
      yield s.writeName(
        row,
        encode("name", at.key, binding, decodeWith("name", previous, binding, row.name)),
      );
    }
    for (const room of s.rooms) yield* room.reseal(at, previous, sessions);
  }
}
