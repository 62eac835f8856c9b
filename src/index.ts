export {
  errorMessage,
  MissingDependencyError,
  SessionError,
  type SessionErrorCode,
  StorageError,
} from "./errors.js";
export { MemorySessionProvider, MemoryStore } from "./memory/store.js";
export { COMPACTION_PREFIX, isCompactionMessage } from "./message.js";
export { Session, type SessionOptions } from "./session/session.js";
export type { SessionSource } from "./session/source.js";
export { AgentSessionProvider } from "./sqlite/agent-provider.js";
export type { SqlDriver, SqlTagSource } from "./sqlite/driver.js";
export type { SqliteDriverName, SqliteHandle, SqliteOptions, SqliteSource } from "./sqlite/open.js";
export { SqliteSessionProvider } from "./sqlite/session-provider.js";
export { SqliteStore } from "./sqlite/store.js";
export type {
  BlockStore,
  ContextCapableStore,
  EntryHit,
  EntryStore,
  SessionStore,
  StoreSearchOptions,
} from "./store/types.js";
export type {
  AppendOptions,
  AppendResult,
  CompactionDetails,
  HistoryRowStat,
  RecentHistoryResult,
  SearchBranch,
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionMessagePart,
  SessionProvider,
  StoredCompaction,
} from "./types.js";
