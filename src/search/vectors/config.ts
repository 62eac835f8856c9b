/**
 * The checked options of the vector channel: the store's (at construction), and those of one nearest() or
 * backfill() call.
 */
import { z } from "zod";
import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { parseInput } from "../../schema/parse.js";
import { func, numberWhere } from "../../schema/rules.js";
import { rule, says } from "../../schema/to-session-error.js";
import { MAX_SEARCH_LIMIT } from "../../store/limits.js";
import { optionalOwner } from "../../store/owner.js";
import { MAX_SEARCH_SESSIONS, searchFilters } from "../options.js";
import { MAX_TIMEOUT_MS } from "./deadline.js";
import { isEmbeddingModel } from "./embed.js";
import type {
  BackfillOptions,
  Embedder,
  NearestOptions,
  NearestRead,
  NearestScope,
  VectorStoreOptions,
} from "./types.js";

/** Texts per embedder call when the caller names no batch size. */
export const DEFAULT_EMBED_BATCH = 64;

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

/** Whether nearest() keeps to the active paths, checked (`INVALID_ARGUMENT`). */
export function nearestBranch({ branch }: NearestOptions): boolean {
  if (branch !== undefined && branch !== "active" && branch !== "all") {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `nearest(): branch must be "active" or "all", got ${describe(branch)}`,
      { issues: [{ path: "branch", rule: "one_of" }] },
    );
  }
  return branch === "active";
}

/** The sessions nearest() keeps to, checked (`INVALID_ARGUMENT`); null when the options leave none to search. */
export function nearestScope({ sessionId, sessionIds }: NearestOptions): NearestScope | null {
  if (sessionId !== undefined && typeof sessionId !== "string") {
    throw new SessionError("INVALID_ARGUMENT", "nearest(): sessionId must be a string", {
      issues: [{ path: "sessionId", rule: "type" }],
    });
  }
  if (sessionIds === undefined) return sessionId === undefined ? {} : { sessionId };
  if (
    !Array.isArray(sessionIds) ||
    sessionIds.length > MAX_SEARCH_SESSIONS ||
    sessionIds.some((id) => typeof id !== "string")
  ) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `nearest(): sessionIds must be an array of at most ${MAX_SEARCH_SESSIONS} session ids`,
      {
        issues: [
          {
            path: "sessionIds",
            rule: Array.isArray(sessionIds) && sessionIds.length > MAX_SEARCH_SESSIONS ? "too_long" : "type",
          },
        ],
      },
    );
  }
  if (sessionId !== undefined) return sessionIds.includes(sessionId) ? { sessionId } : null;
  return sessionIds.length === 0 ? null : { sessionIds: [...new Set(sessionIds)] };
}

/**
 * What one nearest() call reads, checked (`INVALID_ARGUMENT`): its limit, sessions, filters and branch; null when
 * nothing can be found (no limit, or no session left to search).
 */
export function nearestRead(options: NearestOptions): NearestRead | null {
  if (typeof options !== "object" || options === null) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "nearest(): options { limit, sessionId?, sessionIds?, owner?, role?, since?, until?, branch? } are required",
      { issues: [{ path: "options", rule: options === undefined ? "required" : "type" }] },
    );
  }
  const limit = options.limit;
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_SEARCH_LIMIT) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `nearest(): limit must be a whole number from 0 to ${MAX_SEARCH_LIMIT}, got ${describe(limit)}`,
      {
        issues: [
          {
            path: "limit",
            rule: limit === undefined ? "required" : typeof limit === "number" ? "range" : "type",
          },
        ],
      },
    );
  }
  const scope = nearestScope(options);
  const filters = searchFilters(options, "nearest():");
  const activePath = nearestBranch(options);
  const owner = optionalOwner(options.owner, "nearest(): owner");
  return limit === 0 || scope === null ? null : { ...scope, ...filters, limit, activePath, owner };
}

/** The options of one backfill() call, checked (`INVALID_ARGUMENT`), the batch size defaulted. */
export function backfillOptions(options: BackfillOptions): BackfillOptions & { batchSize: number } {
  const batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
    throw new SessionError("INVALID_ARGUMENT", "backfill(): batchSize must be a whole number >= 1", {
      issues: [{ path: "batchSize", rule: typeof batchSize === "number" ? "range" : "type" }],
    });
  }
  if (options.retryFailed !== undefined && typeof options.retryFailed !== "boolean") {
    throw new SessionError("INVALID_ARGUMENT", "backfill(): retryFailed must be a boolean", {
      issues: [{ path: "retryFailed", rule: "type" }],
    });
  }
  return { ...options, batchSize };
}
