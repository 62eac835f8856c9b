import type { AttachmentStats, AttachmentStore } from "../contract/attachments.js";
import type { Attachment } from "../store/media/offload.js";

interface Entry {
  bytes: Uint8Array;
  /** Stored rows that point at this payload (one per row, however often the row names it). */
  links: number;
}

/**
 * The content-addressed payloads of a {@link MemoryStore}: each stored once, counted by the rows linking to it
 * and dropped with the last link. Every change happens synchronously with the row change it belongs to.
 */
export class MemoryAttachments implements AttachmentStore {
  private readonly entries = new Map<string, Entry>();

  /** Links one row to its payloads (stored when new). */
  link(attachments: readonly Attachment[]): void {
    for (const { hash, bytes } of attachments) {
      const entry = this.entries.get(hash);
      if (entry) entry.links++;
      else this.entries.set(hash, { bytes, links: 1 });
    }
  }

  /** Links one row to payloads that are already stored (an import naming a known hash); false when one is not. */
  linkStored(hashes: readonly string[]): boolean {
    if (!hashes.every((hash) => this.entries.has(hash))) return false;
    for (const hash of hashes) this.entries.get(hash)!.links++;
    return true;
  }

  /** Drops one row's links; a payload without links is deleted. */
  unlink(hashes: readonly string[]): void {
    for (const hash of hashes) {
      const entry = this.entries.get(hash);
      if (!entry) continue;
      entry.links--;
      if (entry.links <= 0) this.entries.delete(hash);
    }
  }

  /** @internal the number of stored payloads (an erasure's receipt counts the ones it freed). */
  get size(): number {
    return this.entries.size;
  }

  /** The stored bytes of these hashes (what a read restores pointers from). */
  load(hashes: readonly string[]): Map<string, Uint8Array> {
    const found = new Map<string, Uint8Array>();
    for (const hash of hashes) {
      const entry = this.entries.get(hash);
      if (entry) found.set(hash, entry.bytes);
    }
    return found;
  }

  async get(hash: string): Promise<Uint8Array | null> {
    return this.entries.get(hash)?.bytes ?? null;
  }

  async stats(): Promise<AttachmentStats> {
    let bytes = 0;
    for (const entry of this.entries.values()) bytes += entry.bytes.length;
    return { count: this.entries.size, bytes };
  }
}
