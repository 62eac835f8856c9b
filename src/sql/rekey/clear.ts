/**
 * Sealing an owner's rows in clear (`rekey(owner, { sealClear: true })`, docs/PRIVACY.md "Sealing an owner's clear
 * history"): the walk of rekey.ts seals its messages in clear as it re-seals those under an old key (the engine's
 * resealMessages hook), and the transaction that ends the walk seals the rest here: overlay summaries, facts of the
 * owner and of its sessions, kept stream chunks, its sessions' names, the storage rooms' rows (each room's pass: a LangGraph store's items and checkpoint rows among them), and the blocks and entries a write would now seal for it; the
 * vectors of its messages are deleted, and the change log's compaction rows of its sessions hold their summaries
 * sealed as a write under the key logs them. Each is
 * sealed with the store's stored-form functions, so a row reads back as it was written.
 */
import { decode, encode, isSealedValue } from "../../store/crypto/row-codec.js";
import { sealContent } from "../../store/crypto/seal.js";
import { storedChunk } from "../../store/stream-seal.js";
import { countOf, type Program } from "../program.js";
import type {
  ChangeRow,
  ClearChunkRow,
  ClearFactRow,
  NameRow,
  OwnedSession,
  RekeyTable,
  Rotation,
} from "./table.js";

/** True unless the run seals rows in clear and a message of the owner is still in clear. */
export function* noClearLeft(s: RekeyTable, at: Rotation): Program<boolean> {
  return !at.sealClear || countOf(yield s.clearLeft(at.owner)) === 0;
}

/** Seals the owner's summaries, facts, stream chunks, blocks and entries still in clear under the rotation's key. */
export function* sealClearRows(s: RekeyTable, at: Rotation): Program<void> {
  const sessions = (yield s.ownerSessions(at.owner)) as OwnedSession[];
  const ids = sessions.map((session) => session.session_id);
  for (const row of yield* s.clearSummaries(at.owner)) {
    yield s.writeClearSummary(row, sealContent(at.key, row.session_id, row.id, row.summary, "overlay"));
  }
  for (const row of (yield s.clearFacts(at.owner, ids)) as ClearFactRow[]) {
    yield s.writeFact(row, at.key, { text: row.text, about: row.about });
  }
  for (const row of (yield s.clearChunks(ids)) as ClearChunkRow[]) {
    const chunk = row.chunk.startsWith("~~") ? row.chunk.slice(1) : row.chunk;
    yield s.writeChunk(row, storedChunk(at.key, row.session_id, row.stream_id, Number(row.seq), chunk));
  }
  // Every name of the owner's sessions (an owner has few), those in clear sealed as a write under the key seals one.
  for (const row of (yield s.namesUnder(at.owner, "")) as NameRow[]) {
    if (isSealedValue("name", row.name)) continue;
    const binding = { sessionId: row.id };
    yield s.writeName(
      row,
      encode("name", at.key, binding, decode("name", undefined, undefined, binding, row.name)),
    );
  }
  for (const room of s.rooms) yield* room.sealClear(at, ids);
  if ((yield s.changesPresent()).length > 0) {
    for (const row of (yield s.clearChanges(ids)) as ChangeRow[]) {
      const sealed = sealedChange(at, row);
      if (sealed !== null) yield s.writeChange(row, sealed);
    }
  }
  // An encrypted owner's messages get no vector (an embedding in clear gives away what its text is about): those
  // made while they were in clear go, and the purge removes them from the index's pages.
  if ((yield s.vectorsPresent()).length > 0) {
    for (const session of sessions) if (session.num !== null) yield s.dropVectors(session);
  }
  // So do its facts' vectors (search/vectors/fact-vectors.ts): the empty marker, so they are not pending again.
  if ((yield s.factVectorsPresent()).length > 0) yield s.dropFactVectors(at.owner, ids);
  // A candidate the engine's hook finds to be another owner's, or no owner's with a key, is written as it was.
  for (const row of yield s.clearBlocks(at.owner, ids)) yield* s.resealBlock(row);
  for (const row of yield s.clearEntries(at.owner, ids)) yield* s.resealEntry(row);
}

/**
 * A change-log compaction row's data with its summary sealed as the overlay's is (store/feed/change-rows.ts), or
 * null when it is sealed already (or holds no summary).
 */
function sealedChange(at: Rotation, row: ChangeRow): string | null {
  const change = JSON.parse(row.data) as { id?: unknown; summary?: unknown; sealed?: unknown } | null;
  if (change === null || change.sealed === true) return null;
  if (typeof change.id !== "string" || typeof change.summary !== "string") return null;
  const summary = sealContent(at.key, row.session_id, change.id, change.summary, "overlay");
  return JSON.stringify({ ...change, summary, sealed: true });
}
