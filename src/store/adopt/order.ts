/**
 * The order adopted messages go in: the reference's rows, read in storage order, become transfer messages whose
 * parents always come first (the backend-neutral half of adoption, beside adopt.ts). Inline media is offloaded on
 * the way, as an append would: each message is preceded by `attachment` items for the payloads it points at.
 */

import type { TransferItem, TransferMessage } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { type Offloaded, offloadJson } from "../media/offload.js";
import { assertTransferItem } from "../transfer/validate.js";
import { type AdoptionReport, fingerprint, referenceTime, refusal, reject, unusableId } from "./adopt.js";

/** What adoption imports for a session's messages: each message, after the payloads it points at. */
export type AdoptedItem = Extract<TransferItem, { kind: "message" | "attachment" }>;

/**
 * A reference row's content with its inline media offloaded; content that is not JSON goes as it is. Null when
 * the row cannot be stored: a pointer look-alike that cannot be offloaded (see offloadMessage).
 */
function offloaded(content: string): Offloaded | null {
  try {
    return offloadJson(content);
  } catch (error) {
    // Not JSON: nothing to offload, and the import's own validation decides about the row.
    if (error instanceof SyntaxError) return { content, attachments: [] };
    if (error instanceof SessionError && error.code === "INVALID_MESSAGE") return null;
    throw error;
  }
}

/**
 * The role a row's message has: the reference reads a message from its JSON, and its `updateMessage` rewrites the
 * JSON but never the `role` column, so the JSON's role wins; undefined when the content names none.
 */
function contentRole(content: string): string | undefined {
  try {
    const role = (JSON.parse(content) as { role?: unknown } | null)?.role;
    return typeof role === "string" && role !== "" ? role : undefined;
  } catch {
    // Not JSON: the import's own check refuses the row.
    return undefined;
  }
}

/** A reference `assistant_messages` row as the backends read it. */
export interface ReferenceMessageRow {
  id: unknown;
  parentId: string | null;
  /** Whether the parent is a message of the same session at all (else the row is a root, as the reference reads it). */
  parentFound: boolean;
  /** Whether the parent comes earlier in the reading order (else the row waits for it). */
  parentBefore: boolean;
  role: unknown;
  content: string;
  createdAt: unknown;
}

/**
 * Turns a session's reference message rows, read in storage order, into transfer messages whose parents always
 * come first. A row whose parent comes later waits for it; a row that cannot be stored is left out and its
 * children hang under its own parent (as deleting it would splice them); a row whose parent is gone is a root.
 */
export class MessageOrder {
  /** Fingerprint of every message handed out, by id, to verify after the import. */
  readonly written = new Map<string, string>();
  /**
   * Fingerprint of the inline form of a message whose media was offloaded: a row an earlier version adopted
   * without offloading reads back as that, and is the same message.
   */
  readonly inline = new Map<string, string>();
  private readonly spliced = new Map<string, string | null>();
  private readonly waiting = new Map<string, ReferenceMessageRow[]>();
  private readonly waitingIds = new Set<string>();

  constructor(
    private readonly sessionId: string,
    private readonly report: AdoptionReport,
    private readonly now: string,
  ) {}

  /** The messages ready to import after `row` (none when it waits or is rejected). */
  accept(row: ReferenceMessageRow): AdoptedItem[] {
    const out: AdoptedItem[] = [];
    this.place(row, out);
    return out;
  }

  /** Messages still waiting at the end (their parents form a cycle): adopted as roots. */
  finish(): AdoptedItem[] {
    const out: AdoptedItem[] = [];
    // Each list leaves the map before its rows go out: a row of the cycle is then a child of the root it broke
    // the cycle at, never handed out a second time (as that root's grandchild).
    for (const [parent, rows] of this.waiting) {
      this.waiting.delete(parent);
      for (const row of rows) this.emit({ ...row, parentId: null }, out);
    }
    return out;
  }

  private parentOf(row: ReferenceMessageRow): string | null {
    if (row.parentId === null || !row.parentFound) return null;
    return this.spliced.has(row.parentId) ? (this.spliced.get(row.parentId) ?? null) : row.parentId;
  }

  private place(row: ReferenceMessageRow, out: AdoptedItem[]): void {
    const parent = this.parentOf(row);
    if (parent !== null && (!row.parentBefore || this.waitingIds.has(parent)) && !this.written.has(parent)) {
      const id = String(row.id);
      this.waitingIds.add(id);
      const list = this.waiting.get(parent);
      if (list) list.push(row);
      else this.waiting.set(parent, [row]);
      return;
    }
    this.emit({ ...row, parentId: parent }, out);
  }

  private emit(row: ReferenceMessageRow, out: AdoptedItem[]): void {
    const id = typeof row.id === "string" ? row.id : String(row.id);
    this.waitingIds.delete(id);
    const reason = unusableId(row.id) ?? this.hand(row, id, out);
    if (reason !== undefined) {
      reject(this.report, { table: "assistant_messages", sessionId: this.sessionId, id, reason });
      this.spliced.set(id, row.parentId);
    }
    const children = this.waiting.get(id);
    if (!children) return;
    this.waiting.delete(id);
    for (const child of children) this.place({ ...child, parentBefore: true }, out);
  }

  /**
   * Hands out a row's message after the payloads it points at; else why it cannot be stored: whatever our import
   * refuses (content that is not a message, an id other than the row's, an id over 1,024 bytes, …), which the
   * reference stored unchecked (its `appendMessage` inserts the row before it reads `parts`).
   */
  private hand(row: ReferenceMessageRow, id: string, out: AdoptedItem[]): string | undefined {
    const stored = offloaded(row.content);
    if (!stored) return "an attachment pointer look-alike that cannot be stored";
    const { content, attachments } = stored;
    const message: TransferMessage = {
      id,
      parentId: row.parentId,
      role: contentRole(content) ?? (typeof row.role === "string" ? row.role : ""),
      createdAt: referenceTime(row.createdAt, this.now),
      content,
    };
    if (message.role === "") return "no role";
    const refused = refusal(() => assertTransferItem({ kind: "message", message }));
    if (refused !== undefined) return refused;
    this.written.set(id, fingerprint(message.parentId, message.createdAt, content));
    if (content !== row.content) {
      this.inline.set(id, fingerprint(message.parentId, message.createdAt, row.content));
    }
    for (const attachment of attachments) out.push({ kind: "attachment", attachment });
    out.push({ kind: "message", message });
    return undefined;
  }
}
