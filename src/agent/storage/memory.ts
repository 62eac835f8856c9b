import { SessionError } from "../../errors.js";
import { assertNamedSessionId } from "../../message/ids.js";
import { alreadyExists, assertAppendArgs } from "../checks.js";
import { normalize, reviveState } from "../codec.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage } from "../types.js";
import { assertSessionState } from "./state-schema.js";

/** Sessions in process memory; states are copied in and out, so callers never share objects with the store. */
export class MemorySessionStorage implements SessionStorage {
  private readonly sessions = new Map<string, SessionState>();

  async save(state: SessionState): Promise<void> {
    assertSessionState(state);
    this.sessions.set(state.id, reviveState(normalize(state)));
  }

  /** Like save, but `CONFLICT` when the id is taken (the check and the write run without an await between). */
  async create(state: SessionState): Promise<void> {
    assertSessionState(state);
    const copy = reviveState(normalize(state));
    if (this.sessions.has(state.id)) throw alreadyExists(state.id);
    this.sessions.set(state.id, copy);
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
    assertAppendArgs(messages, patch);
    const state = this.sessions.get(sessionId);
    if (!state) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
    // Everything is copied before anything is applied: a value that is not JSON leaves the session unchanged.
    const added = normalize(messages);
    const entries = normalize(patch.usage ?? []);
    const metadata = patch.metadata === undefined ? undefined : normalize(patch.metadata);
    state.messages.push(...added);
    state.usage.entries.push(...entries);
    if (metadata !== undefined) state.metadata = metadata;
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
