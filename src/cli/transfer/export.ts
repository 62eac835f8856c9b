import { hasFactStore } from "../../contract/facts.js";
import { hasGraphItems } from "../../contract/graph-items.js";
import type { TransferCapableStore } from "../../contract/transfer.js";
import { exportFacts } from "../../store/transfer/facts.js";
import { CliError } from "../errors.js";
import { sessionBlockKeys } from "../inspect/blocks.js";
import type { Progress } from "../progress.js";
import {
  type ExportCounts,
  encodeEnd,
  encodeFact,
  encodeHeader,
  encodeItem,
  encodeRow,
  noCounts,
} from "./format.js";
import { encodeStoreItem } from "./item-lines.js";
import { eachSessionOnce } from "./session-ids.js";

/** What to export and how to report progress. */
export interface ExportOptions {
  /** Sessions to export in this order; empty = every session, then every block and entry of the store. */
  sessionIds: readonly string[];
  /** `sessionIds` is the selection even when empty (an owner without sessions exports none, not the store). */
  exact?: boolean | undefined;
  /**
   * An owner whose blocks and entries recorded as its own (not any session's: its memory-tool directory, an app's
   * owner-level blocks) the export also carries, with their record, so an import restores them as the owner's.
   */
  owner?: string | undefined;
  progress: Progress;
  /** Count messages first so the progress bar has a total (one extra read per session). */
  countFirst: boolean;
}

// Lines are collected into chunks of about this many characters: far fewer writes than one per line.
const CHUNK = 64 * 1024;

/**
 * Writes an export as JSONL: the header, each session (its record, messages parents first, overlays), the
 * blocks (and, for a whole-store export, the search entries; for a partial one, those recorded for its sessions or
 * its owner), the learned facts (for a partial export, those sourced in its sessions only), the LangGraph store
 * items (of every owner, or of the export's owner), then the end record
 * with the counts. Everything is
 * streamed from the store page by page, so memory stays flat whatever the store's size, but for the ids of the
 * sessions and payloads already written (each is written once).
 */
export async function writeExport(
  store: TransferCapableStore,
  write: (chunk: string) => Promise<void>,
  options: ExportOptions,
): Promise<ExportCounts> {
  const selected = [...new Set(options.sessionIds)];
  const partial = selected.length > 0 || options.exact === true;
  for (const id of selected) {
    if (!(await store.transfer.footprint(id)))
      throw new CliError(`session ${JSON.stringify(id)} not found`, "NOT_FOUND");
  }
  if (options.countFirst) options.progress.setTotal(await countMessages(store, selected, partial));
  const counts: ExportCounts = noCounts();
  let buffer = "";
  const emit = async (line: string) => {
    buffer += `${line}\n`;
    if (buffer.length >= CHUNK) {
      await write(buffer);
      buffer = "";
    }
  };
  await emit(encodeHeader());
  const ids: AsyncIterable<string> | readonly string[] = partial ? selected : eachSessionOnce(store.transfer);
  // Each payload once per file: a later session pointing at it finds it stored by the import of an earlier one.
  const sentAttachments = new Set<string>();
  for await (const id of ids) {
    for await (const item of store.transfer.exportSession(id)) {
      if (item.kind === "attachment") {
        if (!sentAttachments.has(item.attachment.hash)) await emit(encodeItem(id, item));
        sentAttachments.add(item.attachment.hash);
        continue;
      }
      await emit(encodeItem(id, item));
      if (item.kind === "session") counts.sessions++;
      else if (item.kind === "compaction") counts.compactions++;
      else if (item.kind === "checkpoint") counts.checkpoints++;
      else {
        counts.messages++;
        options.progress.increment();
      }
    }
  }
  // A partial export carries the blocks its sessions own (inspect/blocks.ts sessionBlockKeys), the entries recorded
  // for them and, for an owner, the blocks and entries recorded as the owner's (each row carries its record); an
  // entry without such a record belongs to a search block, not to a session.
  const wanted = new Set<string>();
  if (partial)
    for (const id of selected) for (const key of await sessionBlockKeys(store, id)) wanted.add(key);
  const sessions = new Set(selected);
  const { owner } = options;
  for await (const row of store.transfer.exportRows()) {
    const recorded =
      (owner !== undefined && row.owner === owner) ||
      (row.sessionId !== undefined && sessions.has(row.sessionId));
    if (partial && !recorded && (row.kind === "entry" || !wanted.has(row.key))) continue;
    await emit(encodeRow(row));
    if (row.kind === "block") counts.blocks++;
    else counts.entries++;
  }
  // Facts last, after the sessions whose messages they name. A partial export carries those whose every source is in
  // its sessions: a fact also drawn from a session left out would name evidence the importing store cannot hold.
  if (hasFactStore(store)) {
    for await (const fact of exportFacts(store.facts)) {
      if (partial && !fact.sources.every((s) => sessions.has(s.sessionId))) continue;
      await emit(encodeFact(fact));
      counts.facts++;
    }
  }
  // LangGraph store items are owner data, not a session's: an owner's export carries the owner's, a whole-store
  // export every owner's, an export of named sessions none.
  if (hasGraphItems(store) && (!partial || owner !== undefined)) {
    for await (const item of store.graphItems.exportItems(partial ? owner! : null, Date.now())) {
      await emit(encodeStoreItem(item));
      counts.items++;
    }
  }
  await emit(encodeEnd(counts));
  if (buffer.length > 0) await write(buffer);
  return counts;
}

async function countMessages(
  store: TransferCapableStore,
  selected: readonly string[],
  partial: boolean,
): Promise<number> {
  let total = 0;
  const ids: AsyncIterable<string> | readonly string[] = partial ? selected : eachSessionOnce(store.transfer);
  for await (const id of ids) total += (await store.transfer.footprint(id))?.messages ?? 0;
  return total;
}
