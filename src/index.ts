export { ContextBlocks } from "./context/blocks.js";
export { type FileSystemSkillOptions, FileSystemSkillProvider } from "./context/fs-skills.js";
export { entryKey } from "./context/keys.js";
export { dropStrictNulls, toStrictSchema } from "./context/openai-strict.js";
export { BlockContextProvider, EntrySearchProvider, formatEntryHits } from "./context/providers.js";
export { REMINDER_OPENING, REMINDER_PREAMBLE } from "./context/reminder.js";
export { blockHeader, renderBlock, renderSystemPrompt, SEPARATOR } from "./context/render.js";
export {
  type AnthropicToolDefinition,
  dispatchToolCall,
  type JsonSchema,
  type OpenAIResponsesToolDefinition,
  type OpenAIToolCall,
  type OpenAIToolDefinition,
  readToolCall,
  type ToolFormat,
  toAnthropicTools,
  toOpenAIResponsesTools,
  toOpenAITools,
} from "./context/tool-formats.js";
export type { SessionTool, SessionToolSet } from "./context/tools.js";
export {
  type AnyContextProvider,
  type ContextBlock,
  type ContextConfig,
  type ContextProvider,
  detectProvider,
  isSearchProvider,
  isSkillProvider,
  isWritableProvider,
  type ProviderCapabilities,
  type SearchProvider,
  type SessionContextOptions,
  type SkillProvider,
  type WhenChanged,
  type WritableContextProvider,
} from "./context/types.js";
export {
  errorMessage,
  MissingDependencyError,
  SessionError,
  type SessionErrorCode,
  StorageError,
} from "./errors.js";
export type { CacheUsage, CreateSessionOptions } from "./manager/input.js";
export { type ManagerSearchOptions, SessionManager } from "./manager/manager.js";
export type { SearchToolOptions } from "./manager/search-tools.js";
export { formatSessionHits } from "./manager/search-tools.js";
export type { ManagerSource } from "./manager/state.js";
export type {
  ManagerCompactAfterOptions,
  ManagerCompactFunction,
  ManagerCompactionErrorHandler,
} from "./manager/templates.js";
export { MemoryBlockStore, MemoryEntryStore } from "./memory/context-store.js";
export { MemorySessionRegistry } from "./memory/registry.js";
export { MemorySessionProvider, MemoryStore } from "./memory/store.js";
export { COMPACTION_PREFIX, isCompactionMessage } from "./message/overlay.js";
export type { StoreVectors } from "./search/vectors/channel.js";
export type {
  BackfillOptions,
  Embedder,
  EmbeddingModelLike,
  NearestMessage,
  NearestOptions,
  VectorChannel,
  VectorFailure,
  VectorStatus,
  VectorStoreOptions,
} from "./search/vectors/types.js";
export type {
  CompactAfterOptions,
  CompactionErrorHandler,
  CompactionPlan,
  CompactionReport,
  SessionTokenCounter,
} from "./session/compaction-types.js";
export type { RecentHistoryOptions, SessionOptions } from "./session/session.js";
export { Session } from "./session/session.js";
export type { SessionSource } from "./session/source.js";
export type { SessionAppendResult, SessionUpdateResult, SessionUpsertResult } from "./session/writes.js";
export type { SqlDriver } from "./sqlite/connection/driver.js";
export type {
  SqliteDriverName,
  SqliteHandle,
  SqliteOptions,
  SqliteSource,
} from "./sqlite/connection/open.js";
export type { SqlTagSource } from "./sqlite/connection/sql-tag-driver.js";
export {
  AgentContextProvider,
  AgentSearchProvider,
  AgentSessionProvider,
  type ProviderSource,
} from "./sqlite/reference.js";
export { SqliteSessionRegistry } from "./sqlite/registry.js";
export { SqliteSessionProvider } from "./sqlite/session-provider.js";
export { SqliteStore } from "./sqlite/store.js";
export type { ErasureCondition, ErasureCounts, ErasureReceipt } from "./store/erasure.js";
export type { ChangeLogOptions } from "./store/feed/change-rows.js";
export {
  type ChangeEvent,
  type ChangeListener,
  type FeedCapableStore,
  hasFeed,
  type SubscribeOptions,
  type Unsubscribe,
} from "./store/feed/feed.js";
export { type MirrorOptions, mirror, type SessionMirror } from "./store/feed/mirror.js";
export type { PurgeCapableStore, PurgeOptions, PurgeReport, PurgeStep } from "./store/purge.js";
export type { RetentionPolicy, SweepOptions, SweepProgress, SweepReport } from "./store/retention.js";
export type {
  AttachmentCapableStore,
  AttachmentStats,
  AttachmentStore,
  BlockStore,
  ContextCapableStore,
  EntryHit,
  EntryStore,
  ImportCounts,
  NewSessionRecord,
  RegistryCapableStore,
  SessionFootprint,
  SessionImportResult,
  SessionInfo,
  SessionListOptions,
  SessionRegistry,
  SessionScanOptions,
  SessionStore,
  SessionTransfer,
  SessionUsage,
  StoreSearchOptions,
  TransferAttachment,
  TransferCapableStore,
  TransferItem,
  TransferMessage,
  TransferRow,
  TransferSession,
} from "./store/types.js";
export {
  hasAttachmentStore,
  hasContextStorage,
  hasSessionRegistry,
  hasTransfer,
  isSessionStore,
} from "./store/types.js";
export type { WritePolicyOptions } from "./store/write-policy.js";
export type {
  AppendOptions,
  AppendResult,
  CompactionDetails,
  HistoryReadOptions,
  HistoryRowStat,
  ImportMessageOptions,
  RecentHistoryResult,
  SearchBranch,
  SearchContext,
  SearchContextTurn,
  SearchMatch,
  SearchOptions,
  SearchResult,
  SessionMessage,
  SessionMessagePart,
  SessionProvider,
  StoredCompaction,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
  WriteSource,
} from "./types.js";
