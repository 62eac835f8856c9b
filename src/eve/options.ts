/** The options of `agentSessionMemory` (docs/EVE.md), parsed once into `INVALID_ARGUMENT` refusals. */
import { z } from "zod";
import type { SessionManager } from "../manager/manager.js";
import { describe } from "../message/describe.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";

/** What `owner` is given: eve's session, with its authenticated principal (`session.auth.current`). */
export interface OwnerContext {
  readonly session: {
    readonly id: string;
    readonly auth: {
      readonly current: {
        readonly principalType: string;
        readonly principalId: string;
        readonly authenticator?: string;
        readonly issuer?: string;
      } | null;
    };
  };
  readonly memory: { readonly scope: { readonly key: string }; readonly slot: string };
}

/** Options of {@link agentSessionMemory}. */
export interface AgentSessionMemoryOptions {
  /** The store's manager: every session the door writes is registered there, for its owner. */
  manager: SessionManager;
  /**
   * Whose memory an operation is, from eve's context; default the authenticated principal's id
   * (`session.auth.current.principalId`). Null or undefined: no owner, so no recall, no capture and no tools.
   */
  owner?: ((context: OwnerContext) => string | null | undefined) | undefined;
  /**
   * Recall at turn start and after compaction: `limit` hits (default 5, at most 20) and the owner's facts
   * (`facts`, default true) within `maxTokens` estimated tokens (default 1,500, from 256 to 32,000), from the
   * sessions of the same eve memory scope (`across: "scope"`, the default) or of every session of the owner
   * (`"owner"`: chats, LangGraph threads, other slots).
   */
  recall?:
    | {
        limit?: number | undefined;
        maxTokens?: number | undefined;
        facts?: boolean | undefined;
        across?: "scope" | "owner" | undefined;
      }
    | undefined;
  /** Capture completed turns and history before compaction (default true). */
  capture?: boolean | undefined;
  /** The most characters a tool answers (default 4,000, from 500 to 100,000). */
  toolOutputChars?: number | undefined;
}

const whole = (field: string, min: number, max: number) =>
  z
    .number(rule(`agentSessionMemory: ${field} must be a number`))
    .int(rule(`agentSessionMemory: ${field} must be a whole number`, "range"))
    .min(min, rule(`agentSessionMemory: ${field} must be ${min} to ${max}`, "range"))
    .max(max, rule(`agentSessionMemory: ${field} must be ${min} to ${max}`, "range"));

/** The error of a bag that is no object; an unknown key keeps zod's wording, which names the key. */
const bag = (text: string) => ({
  error: (issue: { code: string; input?: unknown }) =>
    issue.code === "invalid_type" ? `${text}, got ${describe(issue.input)}` : undefined,
});

const schema = z.strictObject(
  {
    manager: z.custom<SessionManager>(
      (v) => typeof v === "object" && v !== null && typeof (v as SessionManager).forOwner === "function",
      rule("agentSessionMemory: manager must be a SessionManager", "required"),
    ),
    owner: z
      .custom<NonNullable<AgentSessionMemoryOptions["owner"]>>(
        (v) => typeof v === "function",
        rule("agentSessionMemory: owner must be a function"),
      )
      .optional(),
    recall: z
      .strictObject(
        {
          limit: whole("recall.limit", 0, 20).default(5),
          maxTokens: whole("recall.maxTokens", 256, 32_000).default(1_500),
          facts: z.boolean(rule("agentSessionMemory: recall.facts must be a boolean")).default(true),
          across: z
            .enum(
              ["scope", "owner"],
              rule('agentSessionMemory: recall.across must be "scope" or "owner"', "one_of"),
            )
            .default("scope"),
        },
        bag("agentSessionMemory: recall must be an object"),
      )
      .default({ limit: 5, maxTokens: 1_500, facts: true, across: "scope" }),
    capture: z.boolean(rule("agentSessionMemory: capture must be a boolean")).default(true),
    toolOutputChars: whole("toolOutputChars", 500, 100_000).default(4_000),
  },
  bag("agentSessionMemory takes { manager, … }"),
);

/** The parsed options. */
export type MemorySettings = z.output<typeof schema>;

/** Parses the options (`INVALID_ARGUMENT` naming the option). */
export function memorySettings(options: AgentSessionMemoryOptions): MemorySettings {
  return parseInput(schema, options);
}
