/** What an append statement answers (append.ts) and the result or refusal it stands for. */
import type { SessionMessage } from "../contract/message.js";
import type { AppendResult } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import type { RowWritten } from "../store/written.js";

/** The outcome row of an append statement. */
export interface Outcome {
  /** The inserted row's seq (bigint as text), null when nothing was inserted. */
  seq: string | null;
  /** The change-log row's cursor (a logged append that inserted). */
  logged?: string | null;
  /** "held": a chain of new ids found one stored in some session (append-chain.ts `newIds`). */
  outcome: "ok" | "duplicate" | "conflict" | "missing" | "retry" | "keyed" | "held";
  leaf_id: string | null;
  /** False when the key check the sealed content relied on is no longer the recorded one (nothing was written). */
  keyed?: boolean;
}

/** The result of an append's outcome row, or the refusal it reports. */
export function settle(
  row: Outcome | null,
  sessionId: string,
  message: SessionMessage,
  {
    parentId,
    expectedLeafId,
  }: { parentId: string | null | undefined; expectedLeafId?: string | null | undefined },
): RowWritten<AppendResult, string> {
  if (!row) throw new SessionError("STORAGE", `Could not append "${message.id}" to session "${sessionId}"`);
  if (row.seq !== null) {
    return { result: { inserted: true }, seq: row.seq, logged: row.logged ? Number(row.logged) : undefined };
  }
  switch (row.outcome) {
    case "duplicate":
      return { result: { inserted: false } };
    case "conflict":
      throw new SessionError(
        "CONFLICT",
        `The latest leaf of session "${sessionId}" is ${JSON.stringify(row.leaf_id)}, expected ${JSON.stringify(expectedLeafId ?? null)}`,
      );
    case "missing":
      throw new SessionError(
        "PARENT_NOT_FOUND",
        `Parent message "${parentId}" is not in session "${sessionId}"`,
      );
    default:
      throw new SessionError("STORAGE", `Append of "${message.id}" ended as "${row.outcome}" without a row`);
  }
}
