import type { SessionRecord } from "./record.js";
import { closeInterruptedTurn } from "./repair.js";
import { turnStatus, withTurn } from "./turn-status.js";

/**
 * Closes a turn stored as running — its process stopped mid-turn, or storing its end failed — the way a failed
 * turn is closed (error results for lost tool calls, an interrupted note saying `why`), so the next model call gets
 * a valid history. Does nothing when no turn is running.
 */
export async function closeRunningTurn(record: SessionRecord, why: string): Promise<void> {
  const status = turnStatus(record.metadata);
  if (status?.status !== "running") return;
  const closing = closeInterruptedTurn(record.messages, status.number, why);
  const closed = {
    ...status,
    status: "interrupted",
    endedAt: Date.now(),
    stopReason: "interrupted",
  } as const;
  await record.append(closing, { metadata: withTurn(record.metadata, closed) });
}
