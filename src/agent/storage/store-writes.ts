import type { ContextCapableStore } from "../../contract/context.js";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionMessage } from "../../contract/message.js";
import type { AppendResult, SessionProvider } from "../../contract/provider.js";
import type { RegistryCapableStore, SessionInfo, SessionUsage } from "../../contract/registry.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import type { StepCapableStore } from "../../contract/step.js";
import { hasStepWrites } from "../../contract/step.js";
import type { SessionStore } from "../../contract/store.js";
import { SessionError } from "../../errors.js";
import { ownedBy } from "../../store/owner.js";
import { applyPolicy, storePolicy } from "../../store/write-policy.js";
import { corrupt, isObject } from "../checks.js";
import { fromJson, toJson } from "../codec.js";
import type { AgentMessage, UsageEntry } from "../types.js";
import { summarizeUsage } from "../usage.js";
import { AGENT_MESSAGE_KEY, AGENT_SOURCE, type AgentHeader, headerKey, toSessionMessage } from "./mapping.js";

/**
 * What a store needs to hold agent sessions: a registry (names, fork parents, usage), blocks (headers) and step
 * writes (an append, all or nothing).
 */
export type AgentCapableStore = RegistryCapableStore & ContextCapableStore & StepCapableStore;

/** `INVALID_ARGUMENT` unless the store can hold agent sessions (see {@link AgentCapableStore}). */
export function assertAgentCapable(store: SessionStore): asserts store is AgentCapableStore {
  // scan() is checked too: a registry written before it existed would fail in list() with a TypeError.
  if (
    !hasSessionRegistry(store) ||
    typeof store.registry.scan !== "function" ||
    !hasContextStorage(store) ||
    !hasStepWrites(store)
  ) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Agent sessions need a store with a registry (with scan()), context blocks and step writes (memory, SQLite, Postgres); the ${store.backend} store has not`,
      { issues: [{ path: "store", rule: "invalid" }] },
    );
  }
}

/** A session's header block, checked (a hand-edited or truncated one is refused as corrupt); undefined when none. */
export async function readHeader(store: AgentCapableStore, id: string): Promise<AgentHeader | undefined> {
  const block = await store.blocks.getBlock(headerKey(id));
  if (block === null) return undefined;
  const header = fromJson<AgentHeader>(block, `the header of agent session ${id}`);
  // A hand-edited or truncated header would otherwise fail later with a TypeError (usage.push, entry.inputTokens).
  if (!isObject(header)) throw corrupt(id, `its header ${headerKey(id)} is not an object`);
  if (!Array.isArray(header.usage) || !header.usage.every(isObject))
    throw corrupt(id, `the usage of its header ${headerKey(id)} is not a list of entries`);
  if (!isObject(header.metadata))
    throw corrupt(id, `the metadata of its header ${headerKey(id)} is not an object`);
  if (header.usageAfter !== undefined && !Array.isArray(header.usageAfter))
    throw corrupt(id, `the usageAfter of its header ${headerKey(id)} is not a list`);
  return header;
}

/**
 * The ids of the agent sessions in `store` (of `owner` only, when given), oldest first. By id, not by activity: an
 * agent session saved while the list is read moves up the activity order, and offset pages over that order would
 * skip or repeat sessions. Only agent rows are read (an owner's: one range of the registry's owner index), so a
 * store shared with many conversations costs what its agent sessions do. The source is checked again for a
 * registry written before the option existed, which would ignore it.
 */
export async function agentIds(store: AgentCapableStore, owner: string | undefined): Promise<string[]> {
  const found: { id: string; at: string }[] = [];
  const rows =
    owner === undefined
      ? store.registry.scan({ source: AGENT_SOURCE })
      : await store.registry.list({ owner });
  for await (const info of rows) {
    if (info.source === AGENT_SOURCE) found.push({ id: info.id, at: info.created_at });
  }
  found.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return found.map((entry) => entry.id);
}

/** The registry name of an agent session: its `metadata.title` or `metadata.name` when a string, else its id. */
export function sessionName(id: string, metadata: Record<string, unknown>): string {
  for (const key of ["title", "name"]) {
    const value = metadata[key];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return id;
}

/** The registry's usage counters of ledger entries. */
export function counters(entries: readonly UsageEntry[]) {
  const totals = summarizeUsage([...entries]);
  return {
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    cacheReadTokens: totals.cacheReadTokens,
    cacheWriteTokens: totals.cacheWriteTokens,
    cost: totals.costUsd ?? 0,
  };
}

/** `NOT_FOUND` for a session outside an owner-scoped storage's owner (the same answer as an unknown id). */
export function notFound(id: string): SessionError {
  return new SessionError("NOT_FOUND", `Session not found: ${id}`);
}

/**
 * Registers the session (source `"agent"`, fork parent, first model, owner), or returns its row. Another kind of
 * session under the same id is a `CONFLICT`: an agent storage never overwrites a conversation it did not write;
 * with `owner`, a row of another owner (or of none) is `NOT_FOUND`.
 */
export async function register(
  store: AgentCapableStore,
  id: string,
  header: AgentHeader,
  owner?: string,
): Promise<{ info: SessionInfo; created: boolean }> {
  const existing = await store.registry.get(id);
  if (existing) {
    if (owner !== undefined && !ownedBy(existing, owner)) throw notFound(id);
    if (existing.source !== AGENT_SOURCE) {
      throw new SessionError("CONFLICT", `Session "${id}" exists in the store and is not an agent session`);
    }
    return { info: existing, created: false };
  }
  try {
    return { info: await createEntry(store, id, header, owner), created: true };
  } catch (error) {
    // Another process registered it first (two processes moving the same old tables): use its row.
    const info = (error as SessionError).code === "CONFLICT" ? await store.registry.get(id) : null;
    if (!info) throw error;
    if (owner !== undefined && !ownedBy(info, owner)) throw notFound(id);
    return { info, created: false };
  }
}

/**
 * Inserts the registry row of a new agent session; `CONFLICT` (from the store) when the id is registered. Its owner
 * is `owner` (an owner-scoped storage's), else its fork parent's when that is registered with one: a fork stays
 * its source's owner's, as the manager's does.
 */
export async function createEntry(
  store: AgentCapableStore,
  id: string,
  header: AgentHeader,
  owner?: string,
): Promise<SessionInfo> {
  const model = header.usage.find((entry) => typeof entry?.model === "string")?.model ?? null;
  const parent = header.parentId;
  const inherited =
    owner === undefined && parent !== null ? (await store.registry.get(parent))?.owner : undefined;
  return store.registry.create({
    id,
    name: sessionName(id, header.metadata),
    parentSessionId: parent,
    model,
    source: AGENT_SOURCE,
    owner: owner ?? inherited ?? null,
  });
}

/** The ModelMessage a stored row holds, as JSON, for comparing a re-sent message with the stored one. */
function exactJson(message: SessionMessage | undefined): string | undefined {
  const metadata = message?.metadata as Record<string, unknown> | undefined;
  // A row written by other code holds no ModelMessage: it never equals an agent message.
  const exact = metadata?.[AGENT_MESSAGE_KEY];
  return exact === undefined ? undefined : toJson(exact);
}

/** A retried append may find its message stored already: only the same message is accepted (`CONFLICT`). */
export function assertSameMessage(message: AgentMessage, result: AppendResult): void {
  if (!result.inserted && exactJson(result.message) !== toJson(message)) {
    throw new SessionError(
      "CONFLICT",
      `A different message with the id ${JSON.stringify(message.id)} is already stored in this session`,
    );
  }
}

/** Messages per transaction when a whole state is written (a save, create or fork): see {@link appendTail}. */
export const WRITE_BATCH = 1000;

/**
 * Appends a saved state's new tail under `parent` in steps of {@link WRITE_BATCH} messages, each one transaction
 * (`store.writeStep`), so a fork of n messages costs n / WRITE_BATCH commits instead of n. The header block and
 * `usage` (the registry counters) go with the last step: a new session or fork that dies part-way never loads as
 * if it were whole (a resume would carry on with part of the conversation); it lists until `delete(id)` removes
 * it. Every row is checked against the store's policy first, so a message over the size cap is refused before
 * anything is stored. With `owner`, each step checks the session is still that owner's in its own transaction.
 */
export async function appendTail(
  store: AgentCapableStore,
  sessionId: string,
  messages: readonly AgentMessage[],
  parent: string | null,
  last: { block: { key: string; content: string }; usage: SessionUsage | undefined },
  owner?: string,
): Promise<void> {
  const rows = messages.map((message) => toSessionMessage(message));
  const policy = storePolicy(store);
  for (const row of rows) applyPolicy(row, policy, undefined);
  let at = parent;
  for (let from = 0; from === 0 || from < rows.length; from += WRITE_BATCH) {
    const to = Math.min(from + WRITE_BATCH, rows.length);
    const final = to >= rows.length;
    await store.writeStep({
      sessionId,
      messages: rows.slice(from, to),
      parentId: at,
      guard: false,
      block: final ? last.block : undefined,
      usage: final ? last.usage : undefined,
      source: AGENT_SOURCE,
      owner,
      check: (i, result) => assertSameMessage(messages[from + i]!, result),
    });
    if (to > from) at = messages[to - 1]!.id;
  }
}

/**
 * A saved state's in-place rewrites of the kept messages (identical ones write nothing), then the deletion of the
 * stale rest of the stored path. Unscoped: the session provider's own writes. With `owner`: steps of
 * {@link WRITE_BATCH} rewrites (the last also deleting `stale`), each checking in its own transaction that the
 * registry row is still `owner`'s agent session, so a session erased and registered to another owner meanwhile is
 * `NOT_FOUND` and loses nothing; a message no longer stored (another process changed the path) is `NOT_FOUND` too.
 */
export async function rewriteStored(
  store: AgentCapableStore,
  sessionId: string,
  rewrites: readonly SessionMessage[],
  stale: readonly string[],
  owner: string | undefined,
): Promise<void> {
  if (owner === undefined) {
    // No guard to check: no registry statement per batch.
    const provider = store.session(sessionId);
    for (const message of rewrites) await replaceInPlace(provider, message);
    // The stored path becomes exactly the saved state: never an older branch below its last message.
    if (stale.length > 0) await provider.deleteMessages([...stale], { tip: "ancestor" });
    return;
  }
  for (let from = 0; from < rewrites.length || (from === 0 && stale.length > 0); from += WRITE_BATCH) {
    const to = Math.min(from + WRITE_BATCH, rewrites.length);
    await store.writeStep({
      sessionId,
      messages: [],
      parentId: undefined,
      guard: false,
      replace: rewrites.slice(from, to),
      remove: to >= rewrites.length ? stale : undefined,
      removeTip: "ancestor",
      source: AGENT_SOURCE,
      owner,
    });
  }
}

/** Replaces the message of the same id in place (nothing is written when it is identical). */
async function replaceInPlace(provider: SessionProvider, message: SessionMessage): Promise<void> {
  if (provider.upsertMessage) await provider.upsertMessage(message);
  else await provider.updateMessage(message);
}

/**
 * Removes an agent session's row, data and header. For an owner-scoped storage it is an erasure on the condition
 * that the row is still `owner`'s agent session, checked in the erasure's own transaction: a session erased and
 * registered to another owner since the caller looked is left alone. True when something was removed.
 */
export async function removeAgentSession(
  store: AgentCapableStore,
  id: string,
  owner: string | undefined,
): Promise<boolean> {
  const blockKeys = [headerKey(id)];
  if (owner === undefined) return store.registry.delete(id, { blockKeys });
  if (!store.registry.erase) {
    throw new SessionError(
      "UNSUPPORTED",
      "An owner-scoped agent storage needs a registry that can erase sessions",
    );
  }
  const erased = await store.registry.erase(id, { blockKeys, condition: { owner, source: AGENT_SOURCE } });
  return erased !== null;
}
