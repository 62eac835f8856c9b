import type { LanguageModel, ToolSet } from "ai";
import { SessionError } from "../errors.js";
import type { LearnOptions } from "../facts/types.js";
import { parseInput } from "../schema/parse.js";
import { loadAi } from "./ai.js";
import { normalize } from "./codec.js";
import { newId } from "./ids.js";
import { createAgentOptions } from "./input-schema.js";
import { learningStore, TurnLearner } from "./learn.js";
import { resolveModel } from "./model.js";
import { SessionRecord } from "./record.js";
import { closeRunningTurn } from "./recover.js";
import { AgentSession, type AutoCompaction, type SessionMemory } from "./session.js";
import { getDefaultStorage } from "./storage/factory.js";
import type { ModelSettings } from "./turn.js";
import { turnStatus, userMetadata, withTurn } from "./turn-status.js";
import type { ModelPricing, SessionState, SessionStorage } from "./types.js";
import { summarizeUsage } from "./usage.js";

/** Options of {@link createSession}. */
export interface CreateAgentSessionOptions {
  /** An AI SDK model, or an id: "claude-sonnet-4-20250514", "openai:gpt-4o", "google:gemini-2.5-flash", "ollama:llama3". */
  model: LanguageModel;
  /** AI SDK tools the model may call; a tool's error goes back to the model and out as a `tool-error` event. */
  tools?: ToolSet;
  systemPrompt?: string;
  /** Most model steps (calls) per turn; default 20. */
  maxTurns?: number;
  /** Where the session lives; default the storage set with `setDefaultStorage`, else process memory. */
  sessionStorage?: SessionStorage;
  /**
   * Whose session it is (a user or tenant id): the storage's `forOwner(owner)` is used, so a new session or fork is
   * registered with the owner and another owner's session is `NOT_FOUND` to resume or fork. Storages without owners
   * (memory, file, Redis) refuse it (`UNSUPPORTED`).
   */
  owner?: string;
  /** Continue a stored session; fails with `Session not found: <id>` when there is none. */
  resume?: string;
  /** Start a new session from a copy of a stored one's messages; usage starts at zero, `parentId` names the source. */
  fork?: string;
  /** Id of a new session (or fork); default a random `sess_…`. */
  sessionId?: string;
  /** Metadata of a new session (or fork, merged over the source's). */
  metadata?: Record<string, unknown>;
  /** A `Session` of this library whose frozen system prompt, context blocks and memory tools join every call. */
  memory?: SessionMemory;
  /** Prices, so every ledger entry records its cost. */
  pricing?: ModelPricing;
  /** Summarise older messages automatically once a call's input reaches `maxInputTokens`. */
  compaction?: AutoCompaction;
  /** Passed through to `streamText`: temperature, maxOutputTokens, maxRetries, headers, providerOptions, … */
  modelSettings?: ModelSettings;
  /**
   * Learn facts from the session's turns in the background (`{ extractor, … }`, as `learnFacts`; docs/FACTS.md,
   * "Doors"), stopped by `close()`; with `resume`, what the session stored before and has not learned is learned at
   * once. Needs a store-backed storage whose store keeps facts (`UNSUPPORTED` otherwise).
   */
  learn?: LearnOptions;
}

const DEFAULT_MAX_TURNS = 20;

function validate(options: CreateAgentSessionOptions): void {
  parseInput(createAgentOptions, options);
}

/** `storage` scoped to `owner` when one is given (see `CreateAgentSessionOptions.owner`). */
function ownerStorage(storage: SessionStorage, owner: string | undefined): SessionStorage {
  if (owner === undefined) return storage;
  if (typeof storage.forOwner !== "function") {
    throw new SessionError(
      "UNSUPPORTED",
      "This session storage keeps no owners: use a SQLite, Postgres or store-backed one",
    );
  }
  return storage.forOwner(owner);
}

/** A copy of the stored state: a storage may hand out the object it keeps, which the session then appends to. */
async function loadOrFail(storage: SessionStorage, id: string): Promise<SessionState> {
  const state = await storage.load(id);
  if (!state) throw new SessionError("NOT_FOUND", `Session not found: ${id}`);
  return normalize(state);
}

async function openRecord(
  options: CreateAgentSessionOptions,
  storage: SessionStorage,
): Promise<SessionRecord> {
  if (options.resume !== undefined)
    return new SessionRecord(storage, await loadOrFail(storage, options.resume));
  const now = Date.now();
  const id = options.sessionId ?? newId("sess");
  if (options.sessionId !== undefined && (await storage.load(id))) {
    throw new SessionError("CONFLICT", `Session ${id} already exists: resume it instead`);
  }
  const state: SessionState = {
    id,
    messages: [],
    usage: summarizeUsage([]),
    metadata: {},
    createdAt: now,
    updatedAt: now,
  };
  if (options.fork !== undefined) {
    const source = await loadOrFail(storage, options.fork);
    state.messages = source.messages;
    // The turn status travels with the messages, so a fork of a session that stopped mid-turn is repaired too.
    state.metadata = { ...userMetadata(source.metadata), ...options.metadata };
    const status = turnStatus(source.metadata);
    if (status) state.metadata = withTurn(state.metadata, status);
    state.parentId = source.id;
  } else if (options.metadata) state.metadata = { ...options.metadata };
  const record = new SessionRecord(storage, state);
  await record.create();
  return record;
}

/** Opens a session: new, resumed (`resume`) or forked (`fork`), with its storage and model ready. */
export async function createSession(options: CreateAgentSessionOptions): Promise<AgentSession> {
  validate(options);
  const ai = await loadAi();
  const model = await resolveModel(options.model);
  const storage = ownerStorage(options.sessionStorage ?? getDefaultStorage(), options.owner);
  const learnStore = options.learn === undefined ? undefined : await learningStore(storage, options.learn);
  const record = await openRecord(options, storage);
  await closeRunningTurn(record, "the process stopped before the turn finished");
  const learning =
    learnStore && options.learn ? new TurnLearner(learnStore, record.id, options.learn) : undefined;
  const session = new AgentSession({
    ai,
    model,
    record,
    maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS,
    tools: options.tools,
    systemPrompt: options.systemPrompt,
    memory: options.memory,
    pricing: options.pricing,
    compaction: options.compaction,
    settings: options.modelSettings ?? {},
    learning,
  });
  // A resumed session's messages stored before it opened and past its learn mark (turns of a session opened without
  // `learn`, or whose learn a close or a crash cut short) are learned now, not only after its next turn; the mark
  // makes it idempotent: what was learned is not sent again.
  if (options.resume !== undefined) learning?.kick();
  return session;
}

/** Options of {@link resumeSession} and {@link forkSession}. */
export type ReopenOptions = Omit<CreateAgentSessionOptions, "resume" | "fork">;

/** Options of {@link resumeSession}: a resumed session keeps its own id and metadata. */
export type ResumeOptions = Omit<ReopenOptions, "sessionId" | "metadata">;

/** Continues a stored session; fails with `Session not found: <id>` when there is none. */
export function resumeSession(sessionId: string, options: ResumeOptions): Promise<AgentSession> {
  return createSession({ ...options, resume: sessionId });
}

/** Starts a new session from a copy of a stored one (usage at zero, `parentId` set to the source). */
export function forkSession(sessionId: string, options: ReopenOptions): Promise<AgentSession> {
  return createSession({ ...options, fork: sessionId });
}
