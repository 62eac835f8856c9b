import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { assertTransferRow } from "../schema/transfer.js";
import { publishImportReset } from "../store/feed/publish.js";
import { AttachmentExport, AttachmentImport } from "../store/transfer/attachments.js";
import {
  assertTransferMessage,
  batches,
  compareUtf8,
  messageFacts,
  openSessionStream,
} from "../store/transfer/stream.js";
import type {
  ImportCounts,
  SessionFootprint,
  SessionImportResult,
  SessionTransfer,
  TransferItem,
  TransferRow,
} from "../store/types.js";
import { estimateMessageTokens } from "../utils/tokens.js";
import type { MemoryMessageRow, MemorySessionData, MemoryBackend as MemoryStore } from "./data.js";

/** Lossless export and import for a {@link MemoryStore}, with the same order and idempotency as SQLite's. */
/**
 * The payload hashes the importing session's rows link, read from its rows once, when the first message that needs
 * one arrives (reading them for every message made an import quadratic: 20,000 messages took 11 s), then kept up.
 */
interface LinkedHashes {
  hashes?: Set<string>;
}

export class MemoryTransfer implements SessionTransfer {
  constructor(private readonly store: MemoryStore) {}

  private holdsData(sessionId: string): boolean {
    const data = this.store.sessionData(sessionId, false);
    return data !== undefined && (data.rows.size > 0 || data.compactions.length > 0);
  }

  async *sessionIds(): AsyncGenerator<string> {
    // list() is newest activity first; reversed it is the oldest-first order every backend exports in.
    const registered = (await this.store.registry.list()).map((info) => info.id).reverse();
    const known = new Set(registered);
    yield* registered;
    const others = this.store.sessionIds().filter((id) => !known.has(id) && this.holdsData(id));
    yield* others.sort(compareUtf8);
  }

  async footprint(sessionId: string): Promise<SessionFootprint | null> {
    const info = await this.store.registry.get(sessionId);
    const data = this.store.sessionData(sessionId, false);
    if (!info && !data) return null;
    let bytes = 0;
    let tokens = 0;
    for (const row of data?.rows.values() ?? []) {
      bytes += row.bytes;
      // A pointer estimates like the payload it stands for, so nothing is loaded here.
      const message = parseMessage(row.json);
      tokens += message ? estimateMessageTokens([message]) : 0;
    }
    return {
      id: sessionId,
      registered: info !== null,
      messages: data?.rows.size ?? 0,
      compactions: data?.compactions.length ?? 0,
      bytes,
      tokens,
      leafId: data?.leaf?.id ?? null,
    };
  }

  async *exportSession(sessionId: string): AsyncGenerator<TransferItem> {
    const info = await this.store.registry.get(sessionId);
    const data = this.store.sessionData(sessionId, false);
    if (!info && !data) return;
    yield { kind: "session", session: { id: sessionId, info, leafId: data?.leaf?.id ?? null } };
    // The row map is in insertion order, which puts parents before their children.
    const attachments = new AttachmentExport();
    for (const row of data?.rows.values() ?? []) {
      yield* attachments.before(row.json, (hash) => this.store.attachments.load([hash]).get(hash) ?? null);
      yield {
        kind: "message",
        message: {
          id: row.id,
          parentId: row.parent?.id ?? null,
          role: row.role,
          createdAt: row.createdAt,
          content: row.json,
        },
      };
    }
    for (const compaction of data?.compactions ?? []) {
      yield { kind: "compaction", compaction: structuredClone(compaction) };
    }
  }

  async importSession(items: AsyncIterable<TransferItem>): Promise<SessionImportResult> {
    const { header, rest } = await openSessionStream(items);
    const result: SessionImportResult = {
      sessionId: header.id,
      registered: header.info ? this.store.registry.restore({ ...header.info, id: header.id }) : false,
      messages: { inserted: 0, skipped: 0 },
      compactions: { inserted: 0, skipped: 0 },
    };
    let data: MemorySessionData | undefined;
    const compactionIds = new Set<string>();
    const attachments = new AttachmentImport();
    const linked: LinkedHashes = {};
    for await (const batch of batches(rest, 500)) {
      if (!data) {
        data = this.store.sessionData(header.id, true)!;
        for (const compaction of data.compactions) compactionIds.add(compaction.id);
      }
      for (const item of batch) {
        if (item.kind === "attachment") {
          attachments.accept(item.attachment);
        } else if (item.kind === "message") {
          const wrote = this.insertMessage(header.id, data, item.message, attachments, linked);
          result.messages[wrote ? "inserted" : "skipped"]++;
        } else {
          const wrote = !compactionIds.has(item.compaction.id);
          if (wrote) {
            compactionIds.add(item.compaction.id);
            data.compactions.push(structuredClone(item.compaction));
          }
          result.compactions[wrote ? "inserted" : "skipped"]++;
        }
      }
    }
    if (data && result.messages.inserted > 0) {
      data.leaf =
        (header.leafId === null ? undefined : data.rows.get(header.leafId)) ?? newestChildless(data);
    }
    await publishImportReset(this.store.feed, result);
    return result;
  }

  private insertMessage(
    sessionId: string,
    data: MemorySessionData,
    message: Parameters<typeof messageFacts>[0],
    attachments: AttachmentImport,
    linked: LinkedHashes,
  ): boolean {
    assertTransferMessage(message);
    if (data.rows.has(message.id)) return false;
    const parent = message.parentId === null ? null : (data.rows.get(message.parentId) ?? null);
    if (message.parentId !== null && !parent) {
      throw new SessionError(
        "PARENT_NOT_FOUND",
        `Parent message "${message.parentId}" of "${message.id}" is not in session "${sessionId}"`,
      );
    }
    const { hashes, provided } = attachments.needs(message.content);
    const unsent = attachments.unsent(hashes);
    if (unsent.length > 0) {
      linked.hashes ??= new Set([...data.rows.values()].flatMap((row) => row.hashes));
    }
    const here = unsent.filter((hash) => linked.hashes?.has(hash));
    attachments.assertComplete(message.id, message.content, this.store.attachments.load(here));
    if (linked.hashes) for (const hash of hashes) linked.hashes.add(hash);
    // Provided payloads are stored (or linked when already present); the rest are known to be stored.
    const providedHashes = new Set(provided.map((a) => a.hash));
    this.store.attachments.link(provided);
    this.store.attachments.linkStored(hashes.filter((hash) => !providedHashes.has(hash)));
    const facts = messageFacts(message);
    const row: MemoryMessageRow = {
      seq: this.store.nextSeq(),
      id: message.id,
      role: facts.role,
      json: message.content,
      hashes,
      text: facts.text,
      bytes: facts.bytes,
      tokens: facts.tokens,
      createdAt: message.createdAt,
      parent,
      children: [],
    };
    parent?.children.push(row);
    data.rows.set(row.id, row);
    return true;
  }

  async *exportRows(): AsyncGenerator<TransferRow> {
    for (const key of this.store.blocks.keys().sort(compareUtf8)) {
      const content = await this.store.blocks.getBlock(key);
      if (content !== null) yield { kind: "block", key, content };
    }
    for (const entry of this.store.entries.list()) yield { kind: "entry", ...entry };
  }

  async importRows(rows: AsyncIterable<TransferRow>): Promise<ImportCounts> {
    const counts: ImportCounts = { inserted: 0, skipped: 0 };
    for await (const row of rows) {
      assertTransferRow(row);
      let wrote: boolean;
      if (row.kind === "block") {
        wrote = (await this.store.blocks.getBlock(row.key)) === null;
        if (wrote) await this.store.blocks.setBlock(row.key, row.content);
      } else {
        wrote = !this.store.entries.has(row.label, row.key);
        if (wrote) await this.store.entries.setEntry(row.label, row.key, row.content);
      }
      counts[wrote ? "inserted" : "skipped"]++;
    }
    return counts;
  }
}

function newestChildless(data: MemorySessionData): MemoryMessageRow | null {
  let best: MemoryMessageRow | null = null;
  for (const row of data.rows.values()) {
    if (row.children.length === 0 && (!best || row.seq > best.seq)) best = row;
  }
  return best;
}
