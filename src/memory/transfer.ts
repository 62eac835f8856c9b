import { idsToKnow, type KnownIds, rowRecord } from "../context/legacy-records.js";
import type { StoredCompaction } from "../contract/message.js";
import type { SessionInfo } from "../contract/registry.js";
import type {
  SessionImportResult,
  TransferMessage,
  TransferRow,
  TransferSession,
} from "../contract/transfer.js";
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { estimateMessageTokens } from "../message/tokens.js";
import { isOwnerId } from "../store/owner.js";
import type { AttachmentImport } from "../store/transfer/attachments.js";
import {
  type RowImportWriter,
  type SessionImportWriter,
  type SessionSums,
  StoreTransfer,
  type TransferBatch,
} from "../store/transfer/base.js";
import { assertTransferMessage, compareUtf8, messageFacts } from "../store/transfer/stream.js";
import type { MemoryMessageRow, MemorySessionData, MemoryBackend as MemoryStore } from "./data.js";
import { newestChildless } from "./rows.js";

/** Lossless export and import for a {@link MemoryStore}, with the same order and idempotency as SQLite's. */
export class MemoryTransfer extends StoreTransfer<MemorySessionData> {
  constructor(private readonly store: MemoryStore) {
    super(store.registry, store);
  }

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

  async *exportRows(): AsyncGenerator<TransferRow> {
    for (const key of this.store.blocks.keys().sort(compareUtf8)) {
      const content = await this.store.blocks.getBlock(key);
      if (content !== null) yield { kind: "block", key, content, ...this.store.blocks.recordOf(key) };
    }
    for (const entry of this.store.entries.list()) yield { kind: "entry", ...entry };
  }

  protected assertOpen(): void {
    this.store.assertOpen();
  }

  protected async readHead(sessionId: string): Promise<MemorySessionData | undefined> {
    return this.store.sessionData(sessionId, false);
  }

  protected async readLeafId(data: MemorySessionData): Promise<string | null> {
    return data.leaf?.id ?? null;
  }

  protected async readSums(data: MemorySessionData): Promise<SessionSums> {
    let bytes = 0;
    let tokens = 0;
    for (const row of data.rows.values()) {
      bytes += row.bytes;
      // A pointer estimates like the payload it stands for, so nothing is loaded here.
      const message = parseMessage(row.json);
      tokens += message ? estimateMessageTokens([message]) : 0;
    }
    return { messages: data.rows.size, compactions: data.compactions.length, bytes, tokens };
  }

  protected async *readMessages(data: MemorySessionData): AsyncGenerator<TransferMessage> {
    // The row map is in insertion order, which puts parents before their children.
    for (const row of data.rows.values()) {
      const { id, role, createdAt, json: content } = row;
      yield { id, parentId: row.parent?.id ?? null, role, createdAt, content };
    }
  }

  protected readAttachment(hash: string): Uint8Array | null {
    return this.store.attachments.load([hash]).get(hash) ?? null;
  }

  protected async *readCompactions(data: MemorySessionData): AsyncGenerator<StoredCompaction> {
    for (const compaction of data.compactions) yield structuredClone(compaction);
  }

  protected async openImport(header: TransferSession): Promise<SessionImportWriter> {
    return new MemoryImport(this.store, header);
  }

  /** Which of `ids` are stored sessions, and which are owners of registered ones (an imported row's record). */
  private async knownIds(ids: readonly string[]): Promise<KnownIds> {
    const { registry } = this.store;
    const sessions = new Set<string>();
    const owners = new Set<string>();
    for (const id of ids) {
      if (this.store.sessionData(id, false) !== undefined || (await registry.get(id)) !== null)
        sessions.add(id);
      if (isOwnerId(id) && (await registry.list({ owner: id, limit: 1 })).length > 0) owners.add(id);
    }
    return { sessions, owners };
  }

  protected async openRows(): Promise<RowImportWriter> {
    const { blocks, entries } = this.store;
    return {
      run: 1,
      write: async (run: TransferRow[]) => {
        const row = run[0]!;
        const record = rowRecord(row, await this.knownIds(idsToKnow(run)));
        let wrote: boolean;
        if (row.kind === "block") {
          wrote = (await blocks.getBlock(row.key)) === null;
          if (wrote) await blocks.setBlock(row.key, row.content, record);
        } else {
          wrote = !entries.has(row.label, row.key);
          if (wrote) await entries.setEntry(row.label, row.key, row.content, record);
        }
        return wrote ? 1 : 0;
      },
    };
  }
}

/** One session import into a memory store: the session's data, made on the first batch, and its lookups. */
class MemoryImport implements SessionImportWriter {
  private data: MemorySessionData | undefined;
  private readonly compactionIds = new Set<string>();
  /**
   * The payload hashes the importing session's rows link, read from its rows once, when the first message that
   * needs one arrives (reading them for every message made an import quadratic: 20,000 messages took 11 s), then
   * kept up.
   */
  private linked: Set<string> | undefined;

  constructor(
    private readonly store: MemoryStore,
    private readonly header: TransferSession,
  ) {}

  async register(info: SessionInfo): Promise<boolean> {
    return this.store.registry.restore(info);
  }

  async write(
    batch: TransferBatch,
    result: SessionImportResult,
    attachments: AttachmentImport,
  ): Promise<void> {
    if (!this.data) {
      this.data = this.store.sessionData(this.header.id, true)!;
      for (const compaction of this.data.compactions) this.compactionIds.add(compaction.id);
    }
    const data = this.data;
    for (const item of batch) {
      if (item.kind === "attachment") {
        attachments.accept(item.attachment);
      } else if (item.kind === "message") {
        const wrote = this.insertMessage(data, item.message, attachments);
        result.messages[wrote ? "inserted" : "skipped"]++;
      } else {
        const wrote = !this.compactionIds.has(item.compaction.id);
        if (wrote) {
          this.compactionIds.add(item.compaction.id);
          data.compactions.push(structuredClone(item.compaction));
        }
        result.compactions[wrote ? "inserted" : "skipped"]++;
      }
    }
  }

  async finish(result: SessionImportResult): Promise<undefined> {
    const data = this.data;
    if (data && result.messages.inserted > 0) {
      const { leafId } = this.header;
      data.leaf = (leafId === null ? undefined : data.rows.get(leafId)) ?? newestChildless(data);
    }
    return undefined;
  }

  private insertMessage(
    data: MemorySessionData,
    message: TransferMessage,
    attachments: AttachmentImport,
  ): boolean {
    assertTransferMessage(message);
    if (data.rows.has(message.id)) return false;
    const parent = message.parentId === null ? null : (data.rows.get(message.parentId) ?? null);
    if (message.parentId !== null && !parent) {
      throw new SessionError(
        "PARENT_NOT_FOUND",
        `Parent message "${message.parentId}" of "${message.id}" is not in session "${this.header.id}"`,
      );
    }
    const { hashes, provided } = attachments.needs(message.content);
    const unsent = attachments.unsent(hashes);
    if (unsent.length > 0) {
      this.linked ??= new Set([...data.rows.values()].flatMap((row) => row.hashes));
    }
    const here = unsent.filter((hash) => this.linked?.has(hash));
    attachments.assertComplete(message.id, message.content, this.store.attachments.load(here));
    if (this.linked) for (const hash of hashes) this.linked.add(hash);
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
}
