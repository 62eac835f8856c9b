import type { TransferAttachment, TransferItem } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { type Attachment, contentHashes, contentPointers, restoreString, sha256 } from "../media/offload.js";

/**
 * The attachment side of a session's export: each payload a message points at goes out once, as an `attachment`
 * item just before the first message that needs it.
 */
export class AttachmentExport {
  private readonly sent = new Set<string>();

  /** Attachment items to send before a message with this stored content (its payloads not sent yet). */
  async *before(
    content: string,
    load: (hash: string) => Promise<Uint8Array | null> | Uint8Array | null,
  ): AsyncGenerator<TransferItem> {
    for (const hash of contentHashes(content)) {
      if (this.sent.has(hash)) continue;
      this.sent.add(hash);
      const bytes = await load(hash);
      // A dangling pointer (its payload lost) travels as it is; the import then reports it instead of guessing.
      if (bytes !== null) yield { kind: "attachment", attachment: { hash, bytes } };
    }
  }
}

/**
 * The attachment side of a session's import: payloads received from the stream wait here until a message that
 * points at them is written; what a message needs is either waiting here or already stored.
 */
export class AttachmentImport {
  /** Each payload received, with its place among the payloads of the stream (1 for the first). */
  private readonly waiting = new Map<string, { bytes: Uint8Array; at: number }>();
  private received = 0;

  /** Accepts a payload from the stream; `INVALID_ARGUMENT` when its bytes do not hash to its name. */
  accept(attachment: TransferAttachment): void {
    const { hash, bytes } = attachment;
    if (typeof hash !== "string" || !(bytes instanceof Uint8Array) || sha256(bytes) !== hash) {
      throw new SessionError("INVALID_ARGUMENT", `Attachment ${describe(hash)} does not match its bytes`, {
        issues: [{ path: "hash", rule: "invalid" }],
      });
    }
    this.received++;
    if (!this.waiting.has(hash)) this.waiting.set(hash, { bytes, at: this.received });
  }

  /**
   * How many payloads have been received: a writer that accepts a batch's payloads before writing its messages
   * (Postgres) notes this at each message and passes it as `mark`, so a message can use only the payloads that
   * came before it in the stream, as on a writer that takes the items one by one.
   */
  mark(): number {
    return this.received;
  }

  /**
   * What storing a message with this content needs: the payloads it points at that came with the stream (before
   * `mark`, default all: to store if absent) and the hashes of all of them (to link).
   */
  needs(content: string, mark = Number.POSITIVE_INFINITY): { hashes: string[]; provided: Attachment[] } {
    const hashes = contentHashes(content);
    const provided: Attachment[] = [];
    for (const hash of hashes) {
      const bytes = this.before(hash, mark);
      if (bytes) provided.push({ hash, bytes });
    }
    return { hashes, provided };
  }

  /**
   * Throws `INVALID_ARGUMENT` unless every pointer of `content` names a payload that came with the stream (before
   * `mark`) or one this session's rows already link (`linked`, its bytes), and declares the length its payload
   * restores to. Payloads stored only for other sessions do not count: an import cannot reach another session's
   * bytes by naming their hash, and its error is the same whether or not such a payload exists. A wrong length
   * would mislead every size-based read (a recent-history budget counts a pointer by its declared length).
   */
  assertComplete(
    messageId: string,
    content: string,
    linked: ReadonlyMap<string, Uint8Array>,
    mark = Number.POSITIVE_INFINITY,
  ): void {
    for (const pointer of contentPointers(content)) {
      const bytes = this.before(pointer.hash, mark) ?? linked.get(pointer.hash);
      if (bytes === undefined) {
        throw new SessionError(
          "INVALID_ARGUMENT",
          `Message "${messageId}" points at attachment ${pointer.hash}, which is neither in the stream nor linked from this session`,
          { issues: [{ path: "content", rule: "invalid" }] },
        );
      }
      const chars = restoreString(pointer, bytes).length;
      if (chars !== pointer.chars) {
        throw new SessionError(
          "INVALID_ARGUMENT",
          `Message "${messageId}" points at attachment ${pointer.hash} as ${pointer.chars} characters, but it restores to ${chars}`,
          { issues: [{ path: "content", rule: "invalid" }] },
        );
      }
    }
  }

  /** The hashes among `hashes` that did not come with the stream (before `mark`): to look up in the session. */
  unsent(hashes: readonly string[], mark = Number.POSITIVE_INFINITY): string[] {
    return hashes.filter((hash) => this.before(hash, mark) === undefined);
  }

  /** The payload's bytes when it was received among the first `mark` payloads. */
  private before(hash: string, mark: number): Uint8Array | undefined {
    const entry = this.waiting.get(hash);
    return entry !== undefined && entry.at <= mark ? entry.bytes : undefined;
  }
}
