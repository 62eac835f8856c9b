import type { StopReason } from "./types.js";

/** The metadata key under which a session records its latest turn. */
export const TURN_KEY = "agent.turn";

/** Prefix of the metadata keys agent-session reserves for itself; callers cannot set them. */
export const RESERVED_PREFIX = "agent.";

/** The latest turn of a session, as stored in its metadata. */
export interface TurnStatus {
  /** 1-based turn number. */
  number: number;
  /** "running" from the moment the user message is stored until the turn is closed. */
  status: "running" | "done" | "interrupted";
  startedAt: number;
  endedAt?: number;
  stopReason?: StopReason;
}

/** The stored status of the latest turn, if the session has had one. */
export function turnStatus(metadata: Readonly<Record<string, unknown>>): TurnStatus | undefined {
  const value = metadata[TURN_KEY] as Partial<TurnStatus> | undefined;
  if (!value || typeof value !== "object" || typeof value.number !== "number") return undefined;
  return value as TurnStatus;
}

/** Metadata with the turn status replaced. */
export function withTurn(
  metadata: Readonly<Record<string, unknown>>,
  status: TurnStatus,
): Record<string, unknown> {
  return { ...metadata, [TURN_KEY]: status };
}

/** User metadata only: the keys agent-session reserves ("agent.*") removed. */
export function userMetadata(metadata: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata).filter(([key]) => !key.startsWith(RESERVED_PREFIX)));
}
