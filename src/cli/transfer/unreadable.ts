import type { StoredCompaction } from "../../contract/message.js";
import type { TransferMessage } from "../../contract/transfer.js";
import { CliError } from "../errors.js";
import { DanglingSources } from "./dangling.js";

/** The flag that imports a file without its unreadable messages. */
export const SKIP_UNREADABLE_FLAG = "--skip-unreadable";

/** What `--skip-unreadable` left out of one session. */
export interface UnreadableSkipped {
  session: string;
  /** Unreadable message records left out. */
  messages: number;
  /** Overlays dropped because an endpoint was one of those messages. */
  overlays: number;
}

/**
 * The refusal of a file holding an unreadable message (a `raw` record: its stored JSON no longer parses), naming the
 * session, the message, the line and the flag that imports the rest.
 */
export function unreadableError(sessionId: string, messageId: string, line: number): CliError {
  return new CliError(
    `line ${line}: message ${JSON.stringify(messageId)} of session ${JSON.stringify(sessionId)} is unreadable ` +
      "(its stored JSON does not parse, a damaged row); nothing was imported. Pass " +
      `${SKIP_UNREADABLE_FLAG} to import the file without such messages (their children are re-attached to the ` +
      "nearest kept ancestor)",
    "INVALID_MESSAGE",
  );
}

/**
 * Which unreadable messages an import leaves out, and where what pointed at them points instead: decided by the
 * check pass (which reads the whole file first) and applied by the write pass, so a session's leaf, which comes
 * before its messages in the file, can already be moved. As a deleted message's are (a splice), a left-out
 * message's children are re-attached to its nearest kept ancestor, so the rest of the conversation stays
 * connected. Memory: the left-out ids only.
 */
export class UnreadablePlan {
  // Per session: each left-out message id → its nearest kept ancestor (null: none, its children become roots).
  private readonly skipped = new Map<string, Map<string, string | null>>();
  /** The fact sources naming messages neither stored nor in the file, which the write pass leaves out. */
  readonly dangling = new DanglingSources();

  /** Leaves a message out; its parent is earlier in the file or stored, so its own ancestor is already known. */
  skip(sessionId: string, message: TransferMessage): void {
    const ancestor = this.keptAncestor(sessionId, message.parentId);
    const session = this.skipped.get(sessionId);
    if (session) session.set(message.id, ancestor);
    else this.skipped.set(sessionId, new Map([[message.id, ancestor]]));
  }

  /** Whether a message of a session is left out. */
  isSkipped(sessionId: string, id: string): boolean {
    return this.skipped.get(sessionId)?.has(id) === true;
  }

  /** `id` itself when it is kept, else its nearest kept ancestor (null when every ancestor was left out). */
  keptAncestor(sessionId: string, id: string | null): string | null {
    if (id === null) return null;
    const ancestor = this.skipped.get(sessionId)?.get(id);
    return ancestor === undefined ? id : ancestor;
  }

  /** The message record as it is imported: its parent re-pointed past left-out messages. */
  kept(sessionId: string, message: TransferMessage): TransferMessage {
    const parentId = this.keptAncestor(sessionId, message.parentId);
    return parentId === message.parentId ? message : { ...message, parentId };
  }

  /** Whether an overlay is dropped: an endpoint was left out (as a delete drops an overlay at a deleted message). */
  drops(sessionId: string, overlay: StoredCompaction): boolean {
    return this.isSkipped(sessionId, overlay.fromMessageId) || this.isSkipped(sessionId, overlay.toMessageId);
  }
}
