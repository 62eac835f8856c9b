import { SessionError } from "../../errors.js";
import { assertNamedSessionId } from "../../message.js";
import { normalize, reviveState } from "../codec.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage } from "../types.js";

/** Sessions in process memory; states are copied in and out, so callers never share objects with the store. */
export class MemorySessionStorage implements SessionStorage {
  private readonly sessions = new Map<string, SessionState>();

  async save(state: SessionState): Promise<void> {
    assertNamedSessionId(state?.id);
    this.sessions.set(state.id, reviveState(normalize(state)));
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    assertNamedSessionId(sessionId);
    const state = this.sessions.get(sessionId);
    // Totals are derived here rather than kept up to date, so an append stays O(new messages).
    return state === undefined ? undefined : reviveState(normalize(state));
  }

  async delete(sessionId: string): Promise<void> {
    assertNamedSessionId(sessionId);
    this.sessions.delete(sessionId);
  }

  async list(): Promise<string[]> {
    return [...this.sessions.keys()];
  }

  /** Appends in O(new messages): the stored arrays grow in place. */
  async appendMessages(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void> {
    assertNamedSessionId(sessionId);
    const state = this.sessions.get(sessionId);
    if (!state) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
    for (const message of messages) state.messages.push(normalize(message));
    for (const entry of patch.usage ?? []) state.usage.entries.push(normalize(entry));
    if (patch.metadata !== undefined) state.metadata = normalize(patch.metadata);
    state.updatedAt = patch.updatedAt;
  }

  /** Removes every session. */
  clear(): void {
    this.sessions.clear();
  }

  /** Number of stored sessions. */
  size(): number {
    return this.sessions.size;
  }
}
