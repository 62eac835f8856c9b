/**
 * The session transfer every backend of this package runs, as `StoreProvider` runs message writes: the header and
 * footprint rule (the registry row and the session's head, neither: null), the export's order (header, messages
 * with the payloads they point to just before them, overlays), validation of everything imported, the import's
 * steps and its publish. A backend implements only the primitives: its reads, and writers that hold one import's
 * state (its open transactions, caches, the time it stamps rows with).
 */

import type { CheckpointStore } from "../../contract/checkpoints.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { SessionInfo, SessionRegistry } from "../../contract/registry.js";
import type {
  ImportCounts,
  SessionFootprint,
  SessionImportResult,
  SessionTransfer,
  TransferItem,
  TransferMessage,
  TransferRow,
  TransferSession,
} from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { canBeStored } from "../../message/ids.js";
import type { ChangeFeed } from "../feed/feed.js";
import { importChanged, publishImportReset } from "../feed/publish.js";
import { AttachmentExport, AttachmentImport } from "./attachments.js";
import { CheckpointImport, exportCheckpoints } from "./checkpoints.js";
import { assertTransferRow } from "./schema.js";
import { batches, openSessionStream } from "./stream.js";

// Items per import batch: one write transaction each on the SQL backends, fast without holding the lock long.
export const BATCH = 500;
// A run of rows is also cut at this much text, so one statement's parameters stay a few MiB however big rows are.
export const RUN_CHARS = 4 << 20;

/** The validated items of a session stream after its header, as an import writes them (checkpoints apart). */
export type TransferBatch = Exclude<TransferItem, { kind: "session" | "checkpoint" }>[];

/** The store a transfer belongs to: its feed (an import publishes to it) and its checkpoints, if it keeps them. */
export interface TransferPublisher {
  readonly feed: ChangeFeed;
  readonly checkpoints?: CheckpointStore;
}

/** A session's sums as a backend reads them (a SQL driver's numeric text, or null for a sum of no rows). */
export type SessionSums = Record<
  "messages" | "compactions" | "bytes" | "tokens",
  number | string | null | undefined
>;

/** One session import as a backend writes it (see {@link StoreTransfer.importSession} for the order of calls). */
export interface SessionImportWriter {
  /** Inserts the registry row with its exact timestamps and counters unless the id is registered; true when written. */
  register(info: SessionInfo): Promise<boolean>;
  /**
   * Writes one batch (one transaction where the backend has them), counting inserted and skipped rows into
   * `result`; `attachments` holds the stream's payloads seen so far.
   */
  write(batch: TransferBatch, result: SessionImportResult, attachments: AttachmentImport): Promise<void>;
  /**
   * The last step of an import that wrote a batch and inserted: the latest leaf (when messages were inserted) and
   * the import's `reset` change-log row, which commit together; answers the row's cursor (none without a log).
   */
  finish(result: SessionImportResult): Promise<number | undefined>;
}

/** One import of blocks and entries as a backend writes it. */
export interface RowImportWriter {
  /**
   * Rows per write. 1 writes each row before the next is validated (rows before an invalid one are kept); more
   * writes runs of one kind in one statement each.
   */
  readonly run: number;
  /** Inserts the rows (all of one kind) whose keys are not stored yet; answers how many were new. */
  write(rows: TransferRow[]): Promise<number>;
}

/** The base of this package's session transfers (see the module comment). */
export abstract class StoreTransfer<Head> implements SessionTransfer {
  /**
   * `registry`: where the header's row is read. `publisher`: the store whose feed an import publishes to, read at
   * each import (stores make their feed after their transfer), and whose checkpoints a session's stream carries;
   * omitted by adoption, whose imports are not published.
   */
  constructor(
    private readonly registry: Pick<SessionRegistry, "get">,
    private readonly publisher?: TransferPublisher,
  ) {}

  /** Throws `CLOSED` once the store is closed (a backend whose every statement refuses by then does nothing). */
  protected abstract assertOpen(): void;
  /** The session's head (what its rows are found by), undefined when it holds none; only storable ids are asked. */
  protected abstract readHead(sessionId: string): Promise<Head | undefined>;
  /** The id of the head's latest leaf, or null. */
  protected abstract readLeafId(head: Head): Promise<string | null>;
  /** The session's counts and sizes (undefined, as a missing sum, counts 0). */
  protected abstract readSums(head: Head): Promise<SessionSums | undefined>;
  /** The session's messages in storage order, parents before their children. */
  protected abstract readMessages(head: Head): AsyncIterable<TransferMessage>;
  /** The bytes of a stored payload, or null when it is lost. */
  protected abstract readAttachment(hash: string): Promise<Uint8Array | null> | Uint8Array | null;
  /** The session's overlays, oldest first. */
  protected abstract readCompactions(head: Head): AsyncIterable<StoredCompaction>;
  /** Starts one session's import, once its header is read and checked. */
  protected abstract openImport(header: TransferSession): Promise<SessionImportWriter>;
  /** Starts one import of blocks and entries, before its first row is read. */
  protected abstract openRows(): Promise<RowImportWriter>;

  abstract sessionIds(): AsyncIterable<string>;
  abstract exportRows(): AsyncIterable<TransferRow>;

  async footprint(sessionId: string): Promise<SessionFootprint | null> {
    const found = await this.lookup(sessionId);
    if (!found) return null;
    const { info, head } = found;
    const sums: SessionSums | undefined = head ? await this.readSums(head) : undefined;
    return {
      id: sessionId,
      registered: info !== null,
      messages: Number(sums?.messages ?? 0),
      compactions: Number(sums?.compactions ?? 0),
      bytes: Number(sums?.bytes ?? 0),
      tokens: Number(sums?.tokens ?? 0),
      leafId: head ? await this.readLeafId(head) : null,
    };
  }

  async *exportSession(sessionId: string): AsyncGenerator<TransferItem> {
    const found = await this.lookup(sessionId);
    if (!found) return;
    const { info, head } = found;
    const leafId = head ? await this.readLeafId(head) : null;
    yield { kind: "session", session: { id: sessionId, info, leafId } };
    if (head) {
      const attachments = new AttachmentExport();
      for await (const message of this.readMessages(head)) {
        yield* attachments.before(message.content, (hash) => this.readAttachment(hash));
        yield { kind: "message", message };
      }
      for await (const compaction of this.readCompactions(head)) yield { kind: "compaction", compaction };
    }
    // A LangGraph thread is a session with checkpoints and (until its messages are indexed) no head.
    const checkpoints = this.publisher?.checkpoints;
    if (checkpoints) {
      for await (const checkpoint of exportCheckpoints(checkpoints, sessionId)) {
        yield { kind: "checkpoint", checkpoint };
      }
    }
  }

  /**
   * Imports one session stream: the registry row, then batches of messages and overlays. Rows whose ids are
   * stored are skipped, so importing the same stream twice writes nothing the second time. An import that
   * inserted ends with the latest leaf and one `reset` of the session, logged with that last step.
   */
  async importSession(items: AsyncIterable<TransferItem>): Promise<SessionImportResult> {
    const { header, rest } = await openSessionStream(items);
    const writer = await this.openImport(header);
    const result: SessionImportResult = {
      sessionId: header.id,
      registered: header.info ? await writer.register({ ...header.info, id: header.id }) : false,
      messages: { inserted: 0, skipped: 0 },
      compactions: { inserted: 0, skipped: 0 },
    };
    let wrote = false;
    const attachments = new AttachmentImport();
    const checkpoints = this.checkpointsOf(header.id, result);
    // The next batch is read before it is written: the stream may come from this very store's connection.
    for await (const batch of batches(rest, BATCH, checkpoints)) {
      await writer.write(batch, result, attachments);
      wrote = true;
    }
    const logged = wrote && importChanged(result) ? await writer.finish(result) : undefined;
    if (this.publisher) await publishImportReset(this.publisher.feed, result, logged);
    return result;
  }

  /** Imports blocks and entries whose keys are not stored yet (an existing row keeps its content). */
  async importRows(rows: AsyncIterable<TransferRow>): Promise<ImportCounts> {
    const writer = await this.openRows();
    const counts: ImportCounts = { inserted: 0, skipped: 0 };
    let run: TransferRow[] = [];
    let chars = 0;
    const flush = async () => {
      if (run.length === 0) return;
      const inserted = await writer.write(run);
      counts.inserted += inserted;
      counts.skipped += run.length - inserted;
      run = [];
      chars = 0;
    };
    for await (const row of rows) {
      assertTransferRow(row);
      if (run.length > 0 && run[0]!.kind !== row.kind) await flush();
      run.push(row);
      chars += row.content.length + row.key.length;
      if (run.length >= writer.run || chars >= RUN_CHARS) await flush();
    }
    await flush();
    return counts;
  }

  /**
   * How the session's checkpoints are written (after its registry row, so they are sealed for its owner), counted
   * into `result`; `UNSUPPORTED` for a stream carrying checkpoints into a store that keeps none.
   */
  private checkpointsOf(sessionId: string, result: SessionImportResult) {
    const store = this.publisher?.checkpoints;
    const writer = store ? new CheckpointImport(store, sessionId) : undefined;
    return async (checkpoint: Parameters<CheckpointImport["write"]>[0]) => {
      if (!writer) {
        throw new SessionError(
          "UNSUPPORTED",
          `This store keeps no checkpoints (session "${sessionId}" has some)`,
        );
      }
      await writer.write(checkpoint);
      result.checkpoints = (result.checkpoints ?? 0) + 1;
    };
  }

  /** The registry row and the head of a session; undefined when neither exists. */
  private async lookup(
    sessionId: string,
  ): Promise<{ info: SessionInfo | null; head: Head | undefined } | undefined> {
    this.assertOpen();
    const info = await this.registry.get(sessionId);
    // An id no head can have is not looked up (a driver would bind a lone surrogate as U+FFFD: another session).
    const head = canBeStored(sessionId) ? await this.readHead(sessionId) : undefined;
    return info || head ? { info, head } : undefined;
  }
}
