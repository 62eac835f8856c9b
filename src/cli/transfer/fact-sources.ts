/**
 * The import check pass's look at a fact's sources (check.ts): each must be a message the store holds or a readable
 * message earlier in the file, as the write pass requires (src/facts/import.ts); one that is neither is noted
 * (dangling.ts), and the write pass leaves it out. The check streams the file and keeps one session's ids at a time, and a
 * file's facts follow its sessions; so the sources the store does not hold are noted (at most
 * {@link MAX_PENDING_SOURCES} at once) and found by reading the file again up to the last fact that named one. A file
 * whose facts name more is read again once per that many sources: memory stays bounded, and no file is refused for
 * its size.
 */
import type { DanglingSources } from "./dangling.js";
import { Records } from "./import.js";

/** The most fact sources noted at once before the file is read again to find them. */
export const MAX_PENDING_SOURCES = 100_000;

/** Where a source was first needed: the fact's line and id. */
interface Need {
  line: number;
  factId: string;
}

/** The sources the store does not hold, noted by the check pass and found in the file (see the module comment). */
export class FactSourceCheck {
  // Per session: each message id → the first fact that named it.
  private readonly pending = new Map<string, Map<string, Need>>();
  private size = 0;

  constructor(
    private readonly reread: () => AsyncIterable<string>,
    private readonly dangling: DanglingSources,
    private readonly max = MAX_PENDING_SOURCES,
  ) {}

  /** Notes a source the store does not hold, named by fact `factId` at `line`; a full set is looked for first. */
  async need(sessionId: string, messageId: string, line: number, factId: string): Promise<void> {
    let ids = this.pending.get(sessionId);
    if (ids === undefined) {
      ids = new Map();
      this.pending.set(sessionId, ids);
    }
    if (ids.has(messageId)) return;
    ids.set(messageId, { line, factId });
    if (++this.size >= this.max) await this.verify();
  }

  /**
   * Reads the file again, up to the last fact that named a noted source, and finds each source among the readable
   * messages before its fact; one missing is noted as dangling (the write pass leaves it out).
   */
  async verify(): Promise<void> {
    if (this.size === 0) return;
    let last = 0;
    for (const ids of this.pending.values()) for (const { line } of ids.values()) last = Math.max(last, line);
    const lines = this.reread()[Symbol.asyncIterator]();
    const records = new Records(lines, () => {});
    try {
      await records.next();
      for (let record = await records.next(); record && records.line < last; record = await records.next()) {
        if (record.type !== "message" || record.unreadable) continue;
        const ids = this.pending.get(record.sessionId);
        const need = ids?.get(record.message.id);
        if (need === undefined || need.line < records.line) continue;
        ids!.delete(record.message.id);
        this.size--;
      }
    } finally {
      await lines.return?.();
    }
    for (const [sessionId, ids] of this.pending)
      for (const messageId of ids.keys()) this.dangling.note(sessionId, messageId);
    this.pending.clear();
    this.size = 0;
  }
}
