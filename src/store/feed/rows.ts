import type { ChangeEvent } from "../../contract/feed.js";
import type { SessionMessage } from "../../contract/message.js";
import { errorMessage } from "../../errors.js";
import { type ChangeRow, type OpenSummary, rowEvent } from "./change-rows.js";

/**
 * The event a change-log row stands for, as every watcher and replay reads it (SQLite and Postgres alike). A row
 * that cannot be read (damaged JSON, a message read that failed, a sealed summary that does not open) becomes a
 * `reset` of its session at its cursor: the subscriber cannot know what changed, so it re-reads, and delivery goes
 * on with the next row instead of stopping (a replay) or retrying the same rows on every poll (a watcher).
 */
export async function readChangeRow(
  row: ChangeRow,
  origin: "local" | "remote",
  read: (sessionId: string, id: string) => Promise<SessionMessage | null>,
  open?: OpenSummary,
): Promise<ChangeEvent | null> {
  try {
    return await rowEvent(row, origin, read, open);
  } catch (error) {
    const sessionId = typeof row.session_id === "string" ? row.session_id : "";
    return {
      type: "reset",
      reason: `change-log row ${String(row.seq)} could not be read (${errorMessage(error)})`,
      sessionId,
      // Without a session to name, any session may have changed.
      ...(sessionId === "" ? { wholeStore: true } : {}),
      cursor: Number(row.seq),
      origin,
    };
  }
}
