/**
 * What the checkpointer (saver.ts) reads of its options and of a run config, as schemas: the thread (a session id),
 * the subgraph namespace, the checkpoint, a list's options. A value of the wrong kind is `INVALID_ARGUMENT`; a
 * thread id or checkpoint id missing is each method's own answer (LangGraph's plain `Error`).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { z } from "zod";
import { assertSessionId } from "../message/ids.js";
import { parseInput } from "../schema/parse.js";
import { checkedBy, wholeAtLeast } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";

/** The thread, namespace and checkpoint a config names; `ns` undefined only for a list across namespaces. */
export interface ThreadKey {
  threadId: string | undefined;
  ns: string | undefined;
  checkpointId: string | undefined;
}

const text = (field: string) => z.string(rule(`${field} must be a string`)).nullish();

// The keys LangGraph's savers read; the app's own keys (its owner key among them) pass unread.
const configurable = z.looseObject({
  thread_id: checkedBy<string>((value) => assertSessionId(value, "configurable.thread_id")).nullish(),
  checkpoint_ns: text("configurable.checkpoint_ns"),
  checkpoint_id: text("configurable.checkpoint_id"),
});

/** The key of `config`; `anyNs`: a namespace not given stays undefined (a list), else it is the root's, "". */
export function threadKey(config: RunnableConfig, anyNs: true): ThreadKey;
export function threadKey(config: RunnableConfig, anyNs?: false): ThreadKey & { ns: string };
export function threadKey(config: RunnableConfig, anyNs = false): ThreadKey {
  const c = parseInput(configurable, config?.configurable ?? {}, { path: "configurable" });
  return {
    threadId: c.thread_id ?? undefined,
    ns: c.checkpoint_ns ?? (anyNs ? undefined : ""),
    checkpointId: c.checkpoint_id || undefined,
  };
}

const listOptions = z.looseObject({
  limit: wholeAtLeast(0, "limit").optional(),
  before: z
    .looseObject({
      configurable: z.looseObject({ checkpoint_id: text("before.configurable.checkpoint_id") }).optional(),
    })
    .optional(),
  filter: z.record(z.string(), z.unknown(), rule("filter must be an object")).optional(),
});

/** A list's options: at most `limit`, ids below `before`, metadata matching `filter` (none when empty). */
export function listOptionsOf(options: unknown): {
  limit: number;
  before: string | undefined;
  filter: Record<string, unknown> | undefined;
} {
  const o = parseInput(listOptions, options ?? {}, { path: "options" });
  const filter = o.filter && Object.keys(o.filter).length > 0 ? o.filter : undefined;
  return {
    limit: o.limit ?? Number.POSITIVE_INFINITY,
    before: o.before?.configurable?.checkpoint_id ?? undefined,
    filter,
  };
}

/** Options of the checkpointer. */
export const saverOptions = z.object({
  ownerKey: z.string(rule("ownerKey must be a string")).min(1, rule("ownerKey must not be empty")).optional(),
  messagesChannel: z
    .union([z.string().min(1), z.literal(false)], rule("messagesChannel must be a channel name or false"))
    .optional(),
  serde: z
    .custom<object>(
      (value) => typeof value === "object" && value !== null,
      rule("serde must be a serializer"),
    )
    .optional(),
});
