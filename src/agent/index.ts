/**
 * `agent-session/agent`: agent sessions over the AI SDK (`createSession`, `send`/`receive`, resume and fork) with
 * pluggable session storage (memory, files, SQLite, PostgreSQL, Redis) that stores every completed step.
 */

export { type AgentCompactOptions, type Compaction, transcript } from "./compaction.js";
export {
  type CreateAgentSessionOptions,
  createSession,
  forkSession,
  type ReopenOptions,
  type ResumeOptions,
  resumeSession,
} from "./create.js";
export type { SendInput } from "./input.js";
export { type ModelObject, type ModuleImporter, parseModelId, resolveModel } from "./model.js";
export { MISSING_RESULT_TEXT } from "./repair.js";
export { AgentSession, type AutoCompaction, type SessionMemory } from "./session.js";
export {
  createSessionStorage,
  getDefaultStorage,
  isSessionStorage,
  type SessionStorageOptionsByType,
  type SessionStorageType,
  setDefaultStorage,
} from "./storage/factory.js";
export { FileSessionStorage, type FileSessionStorageOptions } from "./storage/file.js";
export { AGENT_MESSAGE_KEY, AGENT_SOURCE, AGENT_USAGE_KEY } from "./storage/mapping.js";
export { MemorySessionStorage } from "./storage/memory.js";
export {
  type PgPoolOptions,
  PostgresSessionStorage,
  type PostgresSessionStorageOptions,
  type PostgresStorageSource,
} from "./storage/postgres.js";
export { RedisSessionStorage, type RedisSessionStorageOptions } from "./storage/redis.js";
export type { IoRedisLike, NodeRedisLike, RedisSource } from "./storage/redis-client.js";
export { SQLiteSessionStorage, type SQLiteSessionStorageOptions } from "./storage/sqlite.js";
export {
  StoreSessionStorage,
  type StoreSessionStorageOptions,
  storeSessionStorage,
} from "./storage/store.js";
export type { ModelSettings } from "./turn.js";
export { TURN_KEY, type TurnStatus } from "./turn-status.js";
export type {
  AgentEvent,
  AgentMessage,
  AgentMessageMetadata,
  AgentSessionUsage,
  ModelPricing,
  SessionPatch,
  SessionState,
  SessionStorage,
  StopReason,
  SyntheticKind,
  UsageEntry,
  UsageTotals,
} from "./types.js";
export { sumUsage } from "./usage.js";
