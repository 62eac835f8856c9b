// What a store's change feed needs from other processes: a change log (record, replay) and a watcher.

import type { ChangeEvent } from "../../contract/feed.js";
import type { StoredCompaction } from "../../contract/message.js";

/** A write as the change log records it (messages are read back by id when another process delivers it). */
export interface LoggedChange {
  sessionId: string;
  type: "append" | "update" | "delete" | "clear" | "erased" | "compaction" | "import" | "reset" | "facts";
  /** The message ids written (one for append, update and import; the requested ids for delete). */
  ids: readonly string[];
  /** The parent the writer named (undefined: after the latest leaf; the log then reads it). */
  parentId?: string | null | undefined;
  compaction?: StoredCompaction;
  /** True when `compaction`'s summary is sealed (an encrypted owner's): stored so, opened for subscribers. */
  sealed?: boolean;
  /** False for an append of an id already stored (nothing written): logged too, so every reader sees it alike. */
  inserted?: boolean;
}

/**
 * A durable change log shared by processes (SQLite file, Postgres): records writes, delivers other origins' writes
 * and replays from a cursor.
 */
export interface RemoteChanges {
  /** Appends a change (after its write committed) and returns its cursor. */
  record(change: LoggedChange): number | Promise<number>;
  /** Told of a row a write committed together with itself (it was not recorded here), e.g. to prune. */
  recorded?(cursor: number): void | Promise<void>;
  /** Every logged event after `cursor` (every origin), oldest first, in pages; a `reset` first if some are gone. */
  replay(after: number): AsyncIterable<ChangeEvent>;
}

/** The sessions somebody listens to: named ones, and whether a store-wide subscriber wants all of them. */
export interface Interest {
  sessions: ReadonlySet<string>;
  all: boolean;
}

/** Delivers other processes' writes while somebody listens (a change log, a data-version watermark, or both). */
export interface RemoteWatch {
  /**
   * Starts delivering to `deliver`; `interest` says which sessions listeners want now. `facts` is called when
   * another writer may have stored facts: no `ChangeEvent` (docs/FACTS.md#recall, "Facts learned elsewhere").
   */
  watch(deliver: (event: ChangeEvent) => void, interest: () => Interest, facts: () => void): RunningWatch;
}

/** A watch that runs while a store has subscribers. */
export interface RunningWatch {
  /**
   * Resolves once every write other processes commit from then on will be delivered: the watch has read its
   * starting point (also when that failed; the failure is reported as a warning).
   */
  readonly ready: Promise<void>;
  /** Takes the starting point of what subscribers added since want (sessions named for the first time). */
  follow(): void;
  /** Told of this store's own committed write to a session, so a watermark does not take it for another's. */
  wrote?(sessionId: string): void;
  stop(): void;
}
