/**
 * The checked options of the vector channel: the store's (at construction), and those of one nearest() or
 * backfill() call.
 */
import { z } from "zod";
import { MAX_TIMEOUT_MS } from "../../runtime/deadline.js";
import { parseInput } from "../../schema/parse.js";
import { func, numberWhere } from "../../schema/rules.js";
import { rule, says } from "../../schema/to-session-error.js";
import { MAX_SEARCH_LIMIT } from "../../store/limits.js";
import { ownerId } from "../../store/owner.js";
import { filterShape, filtersOf, MAX_SEARCH_SESSIONS } from "../options.js";
import { isEmbeddingModel } from "./embed.js";
import type { BackfillOptions, Embedder, NearestOptions, NearestRead, VectorStoreOptions } from "./types.js";

/** Texts per embedder call when the caller names no batch size. */
export const DEFAULT_EMBED_BATCH = 64;
/** Default milliseconds a search waits for its query's embedding. */
export const DEFAULT_QUERY_EMBED_TIMEOUT_MS = 5_000;
/** Default milliseconds one embedder call of the background work or backfill may take. */
export const DEFAULT_EMBED_TIMEOUT_MS = 60_000;

/** The store's vector options, checked. */
export type ChannelOptions = VectorStoreOptions & { embedder: Embedder };

const timeoutMs = (name: string) =>
  numberWhere(
    `${name} must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`,
    (ms) => Number.isSafeInteger(ms) && ms >= 1 && ms <= MAX_TIMEOUT_MS,
  ).optional();

/** A store's vector options (the others of the store's options pass). */
const storeOptions = z.looseObject({
  embedder: z.custom<Embedder>(
    (value) => typeof value === "function" || isEmbeddingModel(value),
    says("embedder must be a function (texts) => vectors or an AI SDK embedding model", "type"),
  ),
  embedDimensions: numberWhere(
    "embedDimensions must be a whole number >= 1",
    (n) => Number.isSafeInteger(n) && n >= 1,
  ).optional(),
  onEmbedError: func("onEmbedError must be a function").optional(),
  vectorIndex: z.enum(["auto", "plain"], rule('vectorIndex must be "auto" or "plain"')).optional(),
  queryEmbedTimeoutMs: timeoutMs("queryEmbedTimeoutMs"),
  embedTimeoutMs: timeoutMs("embedTimeoutMs"),
});

/**
 * The vector options of a store, checked (INVALID_ARGUMENT at construction rather than a failure later), or
 * undefined when there is no embedder: the store then has no channel.
 */
export function vectorOptions(options: VectorStoreOptions): ChannelOptions | undefined {
  if (options.embedder === undefined) return undefined;
  const { embedder } = parseInput(storeOptions, options);
  return { ...options, embedder };
}

/** The deadline option `name`, checked (INVALID_ARGUMENT), or its default. */
export function timeout(
  options: VectorStoreOptions,
  name: "queryEmbedTimeoutMs" | "embedTimeoutMs",
  fallback: number,
): number {
  return parseInput(storeOptions.shape[name], options[name], { path: name }) ?? fallback;
}

const idsRule = rule(`nearest(): sessionIds must be an array of at most ${MAX_SEARCH_SESSIONS} session ids`);

const nearestOptions = z
  .custom<object>()
  .check((ctx) => {
    if (typeof ctx.value === "object" && ctx.value !== null) return;
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      path: ["options"],
      message:
        "nearest(): options { limit, sessionId?, sessionIds?, owner?, role?, since?, until?, branch? } are required",
      params: { rule: ctx.value === undefined ? "required" : "type" },
    });
  })
  .pipe(
    z.object({
      limit: numberWhere(
        `nearest(): limit must be a whole number from 0 to ${MAX_SEARCH_LIMIT}`,
        (n) => Number.isSafeInteger(n) && n >= 0 && n <= MAX_SEARCH_LIMIT,
      ),
      sessionId: z.string(rule("nearest(): sessionId must be a string")).optional(),
      sessionIds: z.array(z.string(idsRule), idsRule).max(MAX_SEARCH_SESSIONS, idsRule).optional(),
      ...filterShape("nearest():"),
      branch: z.enum(["active", "all"], rule('nearest(): branch must be "active" or "all"')).optional(),
      owner: ownerId("nearest(): owner").nullish(),
    }),
  );

/**
 * What one nearest() call reads, checked (`INVALID_ARGUMENT`): its limit, sessions, filters and branch; null when
 * nothing can be found (no limit, or no session left to search).
 */
export function nearestRead(options: NearestOptions): NearestRead | null {
  const { limit, sessionId, sessionIds, branch, owner, ...filters } = parseInput(nearestOptions, options);
  const read = { ...filtersOf(filters), limit, activePath: branch === "active", owner: owner ?? undefined };
  if (limit === 0) return null;
  if (sessionIds === undefined) return { ...read, ...(sessionId === undefined ? {} : { sessionId }) };
  if (sessionId !== undefined) return sessionIds.includes(sessionId) ? { ...read, sessionId } : null;
  return sessionIds.length === 0 ? null : { ...read, sessionIds: [...new Set(sessionIds)] };
}

const backfill = z.looseObject(
  {
    batchSize: numberWhere(
      "backfill(): batchSize must be a whole number >= 1",
      (n) => Number.isSafeInteger(n) && n >= 1,
    )
      // null is no batch size, as an absent one (the option was read with ??).
      .nullish()
      .transform((n) => n ?? DEFAULT_EMBED_BATCH),
    retryFailed: z.boolean(rule("backfill(): retryFailed must be a boolean")).optional(),
  },
  rule("backfill(): options must be an object"),
);

/** The options of one backfill() call, checked (`INVALID_ARGUMENT`), the batch size defaulted. */
export function backfillOptions(options: BackfillOptions): BackfillOptions & { batchSize: number } {
  const { batchSize } = parseInput(backfill, options);
  return { ...options, batchSize };
}
