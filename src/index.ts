import { MemoryStoreProvider } from "./memory/store.js";
import { SqliteStoreProvider } from "./sqlite/session-provider.js";

export { ContextBlocks } from "./context/blocks.js";
export { type FileSystemSkillOptions, FileSystemSkillProvider } from "./context/fs-skills.js";
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
  type BlockBinding,
  type ContextBlock,
  type ContextConfig,
  type ContextProvider,
  detectProvider,
  isSearchProvider,
  isSessionBound,
  isSkillProvider,
  isWritableProvider,
  type ProviderCapabilities,
  type SearchProvider,
  type SessionBoundProvider,
  type SessionContextOptions,
  type SkillProvider,
  type WhenChanged,
  type WritableContextProvider,
} from "./context/types.js";
export type { AttachmentCapableStore, AttachmentStats, AttachmentStore } from "./contract/attachments.js";
export { hasAttachmentStore } from "./contract/attachments.js";
export type { ChatMessage, ChatMessagePart } from "./contract/chat-message.js";
export type {
  BlockStore,
  ContextCapableStore,
  ContextRecord,
  EntryHit,
  EntryStore,
  RecordedBlockStore,
} from "./contract/context.js";
export { hasContextStorage, hasRecords } from "./contract/context.js";
export {
  type ChangeEvent,
  type ChangeListener,
  type FeedCapableStore,
  hasFeed,
  type SubscribeOptions,
  type Unsubscribe,
} from "./contract/feed.js";
export type {
  CompactionDetails,
  SessionMessage,
  SessionMessagePart,
  StoredCompaction,
} from "./contract/message.js";
export type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  DeleteTip,
  HistoryReadOptions,
  HistoryRowStat,
  ImportMessageOptions,
  RecentHistoryResult,
  SessionProvider,
  Siblings,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
  WriteSource,
} from "./contract/provider.js";
export type {
  NewSessionRecord,
  RegistryCapableStore,
  SessionInfo,
  SessionListOptions,
  SessionRegistry,
  SessionScanOptions,
  SessionUsage,
} from "./contract/registry.js";
export { hasSessionRegistry } from "./contract/registry.js";
export type {
  SearchBranch,
  SearchContext,
  SearchContextTurn,
  SearchHit,
  SearchMatch,
  SearchOptions,
  SearchResult,
  StoreSearchOptions,
} from "./contract/search.js";
export type { SessionStore, WritePolicyOptions } from "./contract/store.js";
export { isSessionStore } from "./contract/store.js";
export type {
  StreamCapableStore,
  StreamChunk,
  StreamHead,
  StreamRead,
  StreamState,
  StreamStore,
} from "./contract/streams.js";
export { hasStreamStore } from "./contract/streams.js";
export type {
  ImportCounts,
  SessionFootprint,
  SessionImportResult,
  SessionTransfer,
  TransferAttachment,
  TransferCapableStore,
  TransferItem,
  TransferMessage,
  TransferRow,
  TransferSession,
} from "./contract/transfer.js";
export { hasTransfer } from "./contract/transfer.js";
export {
  errorMessage,
  MissingDependencyError,
  SessionError,
  type SessionErrorCode,
  type SessionIssue,
  type SessionIssueRule,
  StorageError,
} from "./errors.js";
export { type LearnFactsOptions, type LearnReport, learnFacts } from "./facts/learn.js";
export { FactLearner, type LearnerOptions, startLearning } from "./facts/learner.js";
export {
  type FactsProfileOptions,
  FactsProfileProvider,
  factsProfile,
  PROFILE_DESCRIPTION,
  PROFILE_MAX_TOKENS,
} from "./facts/profile.js";
export { PROFILE_HEADER, PROFILE_SEALED } from "./facts/profile-render.js";
export { DEFAULT_FACT_PROMPT } from "./facts/prompt.js";
export { type RecordedFact, recordedExtractor } from "./facts/recorded.js";
export type {
  BatchFailure,
  ExtractedFact,
  ExtractFunction,
  ExtractInput,
  Extractor,
  FactAction,
  LanguageModelLike,
  LearnCounts,
  LearnOptions,
} from "./facts/types.js";
export type { ManagerLearnOptions, OwnerFactScope, OwnerFacts } from "./manager/facts.js";
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
export { MemoryStore, MemoryStoreProvider } from "./memory/store.js";
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
  CompactionSkip,
  SessionTokenCounter,
} from "./session/compaction-types.js";
export type { RecentHistoryOptions, SessionOptions } from "./session/session.js";
export { Session } from "./session/session.js";
export type { SessionSource } from "./session/source.js";
export type { SessionAppendResult, SessionUpdateResult, SessionUpsertResult } from "./session/writes.js";
export type { SqlDriver } from "./sql/engines/sqlite/driver.js";
export type {
  SqliteDriverName,
  SqliteHandle,
  SqliteOptions,
  SqliteSource,
} from "./sql/engines/sqlite/open.js";
export type { SqlTagSource } from "./sql/engines/sqlite/sql-tag-driver.js";
export {
  AgentContextProvider,
  AgentSearchProvider,
  AgentSessionProvider,
  type ProviderSource,
} from "./sqlite/reference.js";
export { SqliteSessionRegistry } from "./sqlite/registry.js";
export { SqliteStoreProvider } from "./sqlite/session-provider.js";
export { SqliteStore } from "./sqlite/store.js";
export { deriveOwnerKey, type Keyring, masterKeyring } from "./store/crypto/keyring.js";
export type { RekeyOptions, RekeyProgress, RekeyReport } from "./store/crypto/rekey-options.js";
export { entryKey } from "./store/entry-key.js";
export type { ErasureCondition, ErasureCounts, ErasureReceipt } from "./store/erasure.js";
export type { ChangeLogOptions } from "./store/feed/change-rows.js";
export { type MirrorOptions, mirror, type SessionMirror } from "./store/feed/mirror.js";
export type { PurgeCapableStore, PurgeOptions, PurgeReport, PurgeStep } from "./store/purge.js";
export type { RetentionPolicy, SweepOptions, SweepProgress, SweepReport } from "./store/retention.js";
export { MAX_SIBLINGS } from "./store/siblings.js";

// Former names, kept so code written against them still runs: the providers are named to pair with `StoreProvider`.
/** @deprecated Use {@link SqliteStoreProvider}, the same class under the name that pairs with `PostgresStoreProvider`. */
export const SqliteSessionProvider = SqliteStoreProvider;
/** @deprecated Use {@link SqliteStoreProvider}. */
export type SqliteSessionProvider = SqliteStoreProvider;
/** @deprecated Use {@link MemoryStoreProvider}, the same class under the name that pairs with `StoreProvider`. */
export const MemorySessionProvider = MemoryStoreProvider;
/** @deprecated Use {@link MemoryStoreProvider}. */
export type MemorySessionProvider = MemoryStoreProvider;
