import { SessionError } from "../errors.js";
import { assertNamedSessionId, describe } from "../message.js";
import { checkListOptions, checkRecord, registryText, wholeCount } from "../store/registry-input.js";
import type { NewSessionRecord, SessionListOptions, SessionUsage } from "../store/types.js";

/** Options of `SessionManager.create(name, options)`. */
export interface CreateSessionOptions {
  /** The session this one continues or was forked from (not checked: a parent may be deleted later). */
  parentSessionId?: string | null | undefined;
  model?: string | null | undefined;
  source?: string | null | undefined;
  /** Register under this id instead of a random UUID (`CONFLICT` when taken), e.g. to adopt existing messages. */
  id?: string | undefined;
}

/** Prompt-cache token counts that `addUsage` adds besides input, output and cost. */
export interface CacheUsage {
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
}

const invalid = (message: string) => new SessionError("INVALID_ARGUMENT", message);

/** Throws `INVALID_ARGUMENT` unless `name` is a string every backend stores exactly (empty is allowed, as in the reference). */
export function assertName(name: unknown): asserts name is string {
  registryText(name, "A session name");
}

/** Validates create options into a registry record with a fresh or given id. */
export function newRecord(name: unknown, options: unknown, freshId: () => string): NewSessionRecord {
  assertName(name);
  if (options !== undefined && (typeof options !== "object" || options === null || Array.isArray(options))) {
    throw invalid(`Session options must be an object, got ${describe(options)}`);
  }
  const o = (options ?? {}) as CreateSessionOptions;
  if (o.id !== undefined) assertNamedSessionId(o.id);
  return checkRecord({ ...o, id: o.id ?? freshId(), name });
}

/** Validates usage: token counts are whole numbers from 0 to 2^53 - 1, the cost a finite number >= 0. */
export function usageDelta(input: unknown, output: unknown, cost: unknown, cache: unknown): SessionUsage {
  if (typeof cost !== "number" || !Number.isFinite(cost) || cost < 0) {
    throw invalid(`cost must be a finite number >= 0, got ${describe(cost)}`);
  }
  if (cache !== undefined && (typeof cache !== "object" || cache === null || Array.isArray(cache))) {
    throw invalid(`Cache usage must be an object, got ${describe(cache)}`);
  }
  const c = (cache ?? {}) as CacheUsage;
  return {
    inputTokens: wholeCount(input, "inputTokens"),
    outputTokens: wholeCount(output, "outputTokens"),
    cost,
    cacheReadTokens: c.cacheReadTokens === undefined ? 0 : wholeCount(c.cacheReadTokens, "cacheReadTokens"),
    cacheWriteTokens:
      c.cacheWriteTokens === undefined ? 0 : wholeCount(c.cacheWriteTokens, "cacheWriteTokens"),
  };
}

/** Validates paging options of `list()`. */
export function listOptions(options: unknown): SessionListOptions {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw invalid(`List options must be an object, got ${describe(options)}`);
  }
  return checkListOptions(options);
}
