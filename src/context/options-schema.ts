/**
 * The builder options of a Session, described once: `SessionConfig` (a Session's builder and constructor) and
 * `ManagerTemplates` (the manager's builder, applied to every session it hands out) parse with these, so a bad
 * value fails with the same message whichever builder took it, and context blocks added later (`addContext`) too.
 */
import { z } from "zod";
import { isStorableId } from "../message/ids.js";
import { func } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { type AnyContextProvider, isWritableProvider, type WritableContextProvider } from "./types.js";

const hasGet = (value: unknown): boolean =>
  typeof value === "object" && value !== null && typeof (value as { get?: unknown }).get === "function";

/** A context block label: a non-empty single line of at most 200 characters every backend stores exactly. */
export const blockLabel = z.custom<string>(
  (value) =>
    typeof value === "string" &&
    value.trim().length > 0 &&
    value.length <= 200 &&
    !/[\r\n]/.test(value) &&
    isStorableId(value),
  rule(
    "A context block label must be a non-empty single line of at most 200 well-formed characters",
    "format",
  ),
);

/** A label not yet `taken` (checked after {@link blockLabel}): block labels are unique within a session. */
export const newBlockLabel = (taken: (label: string) => boolean) =>
  blockLabel.refine((label) => !taken(label), {
    error: (issue) => `Block "${String(issue.input)}" already exists`,
    params: { rule: "conflict" },
  });

/** Options of `withContext` / `addContext` (unknown keys are kept, as the block stores the options as given). */
export const contextOptions = z.looseObject({
  maxTokens: z.number(rule("maxTokens must be a number >= 0")).min(0).optional(),
  description: z
    .string(rule("A block description must be a single-line string"))
    .regex(/^[^\r\n]*$/)
    .optional(),
  whenChanged: z.enum(["wait", "remind"], rule('whenChanged must be "wait" or "remind"')).optional(),
  provider: z
    .custom<AnyContextProvider>(hasGet, rule("A context provider needs a get() method", "type"))
    .optional(),
});

/** `withCachedPrompt(provider)`: none (the session's own storage) or a provider with get() and set(). */
export const promptStore = z
  .custom<WritableContextProvider>(
    isWritableProvider,
    rule("withCachedPrompt needs a provider with get() and set()", "type"),
  )
  .optional();

/** The compaction builders' arguments. */
export const compactFunction = func("onCompaction needs a function");
export const compactionThreshold = z.number(rule("compactAfter needs a token threshold >= 0")).min(0);
export const compactionErrorHandler = func("onCompactionError needs a function");

/** `internal_onMessagesChanged(listener)`: a function, or null to remove it. */
export const messagesChangedListener = func("internal_onMessagesChanged needs a function or null").nullable();
