import { errorMessage, SessionError } from "../errors.js";
import { assertStoredShape } from "./checks.js";
import type { AgentMessage, SessionState, UsageEntry } from "./types.js";
import { summarizeUsage } from "./usage.js";

/**
 * JSON with the values a ModelMessage may hold that plain JSON mangles: bytes become base64 strings and URLs their
 * href, both of which the AI SDK accepts as file/image data, so a stored message means the same after a round trip.
 * Its refusals are hand-written: it runs on every agent save and append.
 */
export function toJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, replacer);
  } catch (error) {
    // A cycle, a throwing toJSON or getter: the caller's value, so the caller's mistake, not a TypeError.
    throw new SessionError("INVALID_ARGUMENT", `A value cannot be stored as JSON: ${errorMessage(error)}`, {
      cause: error,
      issues: [{ path: "", rule: "invalid" }],
    });
  }
  if (text === undefined)
    throw new SessionError("INVALID_ARGUMENT", `A value cannot be stored as JSON: got ${typeof value}`, {
      issues: [{ path: "", rule: "type" }],
    });
  return text;
}

function replacer(this: Record<string, unknown>, key: string, replaced: unknown): unknown {
  // `this[key]` is the value before toJSON ran (a Buffer's toJSON would turn it into a byte array).
  const raw = this[key];
  if (raw instanceof Uint8Array)
    return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("base64");
  if (raw instanceof ArrayBuffer) return Buffer.from(raw).toString("base64");
  if (raw instanceof URL) return raw.href;
  if (typeof raw === "bigint") return raw.toString();
  return replaced;
}

/** Parses what {@link toJson} wrote; a corrupt row is a STORAGE error naming where it came from. */
export function fromJson<T>(text: string, where: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new SessionError("STORAGE", `Corrupt JSON in ${where}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** A deep copy that looks exactly like what a storage would hand back after a round trip. */
export function normalize<T>(value: T): T {
  return JSON.parse(toJson(value)) as T;
}

/** Assembles a state from its stored pieces, deriving the usage totals from the ledger. */
export function buildState(parts: {
  id: string;
  messages: AgentMessage[];
  entries: UsageEntry[];
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  parentId?: string | null | undefined;
}): SessionState {
  // Corrupt stored pieces (a null ledger entry, metadata that is a number) would otherwise be TypeErrors later.
  assertStoredShape(parts.id, parts);
  const state: SessionState = {
    id: parts.id,
    messages: parts.messages,
    usage: summarizeUsage(parts.entries),
    metadata: parts.metadata,
    createdAt: parts.createdAt,
    updatedAt: parts.updatedAt,
  };
  if (typeof parts.parentId === "string" && parts.parentId.length > 0) state.parentId = parts.parentId;
  return state;
}

/** A loaded state whose usage totals are recomputed from its ledger (user storages may store stale totals). */
export function reviveState(state: SessionState): SessionState {
  return buildState({
    id: state.id,
    messages: Array.isArray(state.messages) ? state.messages : [],
    entries: Array.isArray(state.usage?.entries) ? state.usage.entries : [],
    metadata: state.metadata && typeof state.metadata === "object" ? state.metadata : {},
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    parentId: state.parentId,
  });
}
