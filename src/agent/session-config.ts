import type { Tool, ToolSet } from "ai";
import type { AiModule } from "./ai.js";
import type { AgentCompactOptions } from "./compaction.js";
import type { TurnLearner } from "./learn.js";
import type { ModelObject } from "./model.js";
import type { SessionRecord } from "./record.js";
import type { ModelSettings } from "./turn.js";
import type { ModelPricing } from "./types.js";

/**
 * The part of this library's `Session` an agent session uses: its frozen prompt (with context blocks), tools and,
 * when present, the reminder of changed `whenChanged: "remind"` blocks.
 */
export interface SessionMemory {
  freezeSystemPrompt(): Promise<string>;
  tools(): Promise<Record<string, Tool>>;
  reminder?(): Promise<string | null>;
}

/** Automatic compaction: summarise older messages before a turn once the last call's input reached the limit. */
export interface AutoCompaction extends AgentCompactOptions {
  maxInputTokens: number;
}

/** Everything an {@link AgentSession} runs with (built by `createSession`). */
export interface AgentSessionConfig {
  ai: AiModule;
  model: ModelObject;
  record: SessionRecord;
  maxTurns: number;
  tools?: ToolSet | undefined;
  systemPrompt?: string | undefined;
  memory?: SessionMemory | undefined;
  pricing?: ModelPricing | undefined;
  compaction?: AutoCompaction | undefined;
  settings: ModelSettings;
  /** Learns facts from the turns (the `learn` option). */
  learning?: TurnLearner | undefined;
}
