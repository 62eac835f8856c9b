import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";

/** What `Session.create(agent)` broadcasts through: an Agent's (or any object's) `broadcast(message)`. */
export interface Broadcaster {
  broadcast(message: string): unknown;
}

/** The reference's status frame (`cf_agent_session`), sent after every write and around a compaction. */
export interface SessionStatusFrame {
  type: "cf_agent_session";
  phase: "idle" | "compacting";
  tokenEstimate: number;
  tokenThreshold: number | null;
  compacted?: { tokensBefore: number };
}

/** The reference's frame for a failed compaction (`cf_agent_session_error`). */
export interface SessionErrorFrame {
  type: "cf_agent_session_error";
  error: string;
}

/** True for an object with a `sql` tag and a `broadcast` method (an Agent): the reference broadcasts only then. */
export function broadcasterOf(source: unknown): Broadcaster | undefined {
  if (typeof source !== "object" || source === null) return undefined;
  const candidate = source as { sql?: unknown; broadcast?: unknown };
  return typeof candidate.sql === "function" && typeof candidate.broadcast === "function"
    ? (source as Broadcaster)
    : undefined;
}

/**
 * Sends the reference's frames as JSON strings, exactly as it does. A broadcast that throws never fails the
 * write that caused it (the write has committed); it is reported as a process warning.
 */
export class StatusFrames {
  constructor(private readonly target: Broadcaster) {}

  status(
    phase: "idle" | "compacting",
    tokenEstimate: number,
    tokenThreshold: number | undefined,
    compacted?: { tokensBefore: number },
  ): void {
    const frame: SessionStatusFrame = {
      type: "cf_agent_session",
      phase,
      tokenEstimate,
      tokenThreshold: tokenThreshold ?? null,
      ...(compacted ? { compacted } : {}),
    };
    this.send(frame);
  }

  error(error: unknown): void {
    const text = error instanceof Error ? error.message : String(error);
    this.send({ type: "cf_agent_session_error", error: text } satisfies SessionErrorFrame);
  }

  private send(frame: SessionStatusFrame | SessionErrorFrame): void {
    try {
      this.target.broadcast(JSON.stringify(frame));
    } catch (error) {
      emitWarning(
        new SessionError("STORAGE", `agent.broadcast() threw while sending ${frame.type}`, { cause: error }),
        "AgentSessionBroadcastWarning",
      );
    }
  }
}
