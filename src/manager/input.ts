import type { NewSessionRecord, SessionListOptions, SessionUsage } from "../contract/registry.js";
import { parseInput } from "../schema/parse.js";
import {
  checkRecord,
  createOptions,
  managerListOptions,
  managerUsage,
  registryText,
  stripUndefined,
} from "../store/registry-schema.js";

/** Options of `SessionManager.create(name, options)`. */
export interface CreateSessionOptions {
  /** The session this one continues or was forked from (not checked: a parent may be deleted later). */
  parentSessionId?: string | null | undefined;
  model?: string | null | undefined;
  source?: string | null | undefined;
  /** Whose session it is (a user or tenant id; see `forOwner`): set once here, never changed. */
  owner?: string | null | undefined;
  /** Register under this id instead of a random UUID (`CONFLICT` when taken), e.g. to adopt existing messages. */
  id?: string | undefined;
}

/** Prompt-cache token counts that `addUsage` adds besides input, output and cost. */
export interface CacheUsage {
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
}

/** Parses a session name: a string every backend stores exactly (empty is allowed, as in the reference). */
export function parseName(name: unknown): string {
  return registryText(name, "A session name", "name");
}

/** Validates create options into a registry record with a fresh or given id. */
export function newRecord(name: unknown, options: unknown, freshId: () => string): NewSessionRecord {
  const checked = parseName(name);
  const o = parseInput(createOptions, options) ?? {};
  return checkRecord({ ...o, id: o.id ?? freshId(), name: checked });
}

/** Validates usage: token counts are whole numbers from 0 to 2^53 - 1, the cost a finite number >= 0. */
export function usageDelta(input: unknown, output: unknown, cost: unknown, cache: unknown): SessionUsage {
  const delta = parseInput(managerUsage, { cost, cache, inputTokens: input, outputTokens: output });
  const { inputTokens, outputTokens } = delta;
  return { inputTokens, outputTokens, cost: delta.cost, ...delta.cache };
}

/** Validates paging options of `list()`. */
export function listOptions(options: unknown): SessionListOptions {
  return stripUndefined(parseInput(managerListOptions, options) ?? {});
}
