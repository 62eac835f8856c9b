import { errorMessage, SessionError } from "../errors.js";
import { normalize } from "./codec.js";
import type { AgentMessage, SessionState, SessionStorage, UsageEntry } from "./types.js";
import { summarizeUsage } from "./usage.js";

/** What one write adds: messages, ledger entries, and optionally a new metadata object. */
export interface RecordChange {
  usage?: UsageEntry[];
  metadata?: Record<string, unknown>;
}

/**
 * A session's state in memory and in its storage, kept equal: every change is written first and applied in memory
 * only once the storage accepted it, and writes run one at a time in call order.
 */
export class SessionRecord {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: SessionStorage,
    private readonly state: SessionState,
  ) {}

  get id(): string {
    return this.state.id;
  }

  /** The stored messages (live array: do not mutate). */
  get messages(): readonly AgentMessage[] {
    return this.state.messages;
  }

  /** The ledger (live array: do not mutate). */
  get entries(): readonly UsageEntry[] {
    return this.state.usage.entries;
  }

  get metadata(): Readonly<Record<string, unknown>> {
    return this.state.metadata;
  }

  /** A deep copy of the whole state with fresh totals. */
  snapshot(): SessionState {
    const copy = normalize(this.state);
    copy.usage = summarizeUsage(copy.usage.entries);
    return copy;
  }

  /** Writes the whole state (a new session or a fork). */
  create(): Promise<void> {
    return this.serial(() =>
      typeof this.storage.create === "function"
        ? this.storage.create(this.snapshot())
        : this.storage.save(this.snapshot()),
    );
  }

  /**
   * Appends messages and ledger entries: through the storage's `appendMessages` when it has one (cost of the new
   * items only), else as a full `save` of the next state (cost of the whole session, but correct).
   */
  append(messages: readonly AgentMessage[], change: RecordChange = {}): Promise<void> {
    return this.serial(() => this.reloadingOnFailure(() => this.write(messages, change)));
  }

  /**
   * Runs a write; when it fails, reloads the state from storage before rethrowing, since a write may have committed
   * before it threw (a lost reply) and the memory must not fall behind what the next write appends after. A reload
   * that fails too leaves the memory as it was (the next resume reads storage) and is named in a STORAGE error.
   */
  private async reloadingOnFailure(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      let stored: SessionState | undefined;
      try {
        stored = await this.storage.load(this.state.id);
      } catch (reloadError) {
        throw new SessionError(
          "STORAGE",
          `${errorMessage(error)} (reloading session ${this.state.id} afterwards failed too: ${errorMessage(reloadError)})`,
          { cause: error },
        );
      }
      if (stored) {
        const copy = normalize(stored);
        this.state.messages = copy.messages;
        this.state.usage = summarizeUsage(copy.usage.entries);
        this.state.metadata = copy.metadata;
        this.state.updatedAt = copy.updatedAt;
      }
      throw error;
    }
  }

  /** Writes one change, then applies it in memory. */
  private async write(messages: readonly AgentMessage[], change: RecordChange): Promise<void> {
    const added = messages.map((message) => normalize(message));
    const entries = (change.usage ?? []).map((entry) => normalize(entry));
    const metadata = change.metadata === undefined ? undefined : normalize(change.metadata);
    const updatedAt = Math.max(Date.now(), this.state.updatedAt);
    if (typeof this.storage.appendMessages === "function") {
      const patch = {
        updatedAt,
        ...(entries.length > 0 ? { usage: entries } : {}),
        ...(metadata ? { metadata } : {}),
      };
      await this.storage.appendMessages(this.state.id, added, patch);
    } else {
      const next = this.snapshot();
      next.messages.push(...normalize(added));
      next.usage = summarizeUsage([...next.usage.entries, ...normalize(entries)]);
      if (metadata) next.metadata = normalize(metadata);
      next.updatedAt = updatedAt;
      await this.storage.save(next);
    }
    this.state.messages.push(...added);
    this.state.usage.entries.push(...entries);
    if (metadata) this.state.metadata = metadata;
    this.state.updatedAt = updatedAt;
  }

  /** Resolves once every write started so far has finished (successfully or not). */
  async settled(): Promise<void> {
    await this.queue;
  }

  private serial<T>(body: () => Promise<T>): Promise<T> {
    const result = this.queue.then(body, body);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
