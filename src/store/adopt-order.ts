/**
 * The order adopted messages go in: the reference's rows, read in storage order, become transfer messages whose
 * parents always come first (the backend-neutral half of adoption, beside adopt.ts).
 */
import { type AdoptionReport, fingerprint, referenceTime, reject, unusableId } from "./adopt.js";
import type { TransferMessage } from "./types.js";

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
  private readonly spliced = new Map<string, string | null>();
  private readonly waiting = new Map<string, ReferenceMessageRow[]>();
  private readonly waitingIds = new Set<string>();

  constructor(
    private readonly sessionId: string,
    private readonly report: AdoptionReport,
    private readonly now: string,
  ) {}

  /** The messages ready to import after `row` (none when it waits or is rejected). */
  accept(row: ReferenceMessageRow): TransferMessage[] {
    const out: TransferMessage[] = [];
    this.place(row, out);
    return out;
  }

  /** Messages still waiting at the end (their parents form a cycle): adopted as roots. */
  finish(): TransferMessage[] {
    const out: TransferMessage[] = [];
    for (const rows of this.waiting.values()) {
      for (const row of rows) this.emit({ ...row, parentId: null }, out);
    }
    this.waiting.clear();
    return out;
  }

  private parentOf(row: ReferenceMessageRow): string | null {
    if (row.parentId === null || !row.parentFound) return null;
    return this.spliced.has(row.parentId) ? (this.spliced.get(row.parentId) ?? null) : row.parentId;
  }

  private place(row: ReferenceMessageRow, out: TransferMessage[]): void {
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

  private emit(row: ReferenceMessageRow, out: TransferMessage[]): void {
    const reason = unusableId(row.id) ?? (typeof row.role === "string" && row.role ? undefined : "no role");
    const id = typeof row.id === "string" ? row.id : String(row.id);
    this.waitingIds.delete(id);
    if (reason) {
      reject(this.report, { table: "assistant_messages", sessionId: this.sessionId, id, reason });
      this.spliced.set(id, row.parentId);
    } else {
      const message: TransferMessage = {
        id,
        parentId: row.parentId,
        role: row.role as string,
        createdAt: referenceTime(row.createdAt, this.now),
        content: row.content,
      };
      this.written.set(id, fingerprint(message.parentId, message.createdAt, message.content));
      out.push(message);
    }
    const children = this.waiting.get(id);
    if (!children) return;
    this.waiting.delete(id);
    for (const child of children) this.place({ ...child, parentBefore: true }, out);
  }
}
