import { SessionError } from "../../errors.js";
import type { StepCapableStore } from "../../store/step.js";
import type { ContextCapableStore, RegistryCapableStore, SessionInfo } from "../../store/types.js";
import { applyPolicy, OPEN_POLICY, type WritePolicy } from "../../store/write-policy.js";
import type { AppendResult, SessionMessage, SessionProvider } from "../../types.js";
import { toJson } from "../codec.js";
import type { AgentMessage, UsageEntry } from "../types.js";
import { summarizeUsage } from "../usage.js";
import { AGENT_MESSAGE_KEY, AGENT_SOURCE, type AgentHeader, toSessionMessage } from "./mapping.js";

/**
 * What a store needs to hold agent sessions: a registry (names, fork parents, usage), blocks (headers) and step
 * writes (an append, all or nothing).
 */
export type AgentCapableStore = RegistryCapableStore & ContextCapableStore & StepCapableStore;

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

/**
 * Registers the session (source `"agent"`, fork parent, first model), or returns its row. Another kind of session
 * under the same id is a `CONFLICT`: an agent storage never overwrites a conversation it did not write.
 */
export async function register(
  store: AgentCapableStore,
  id: string,
  header: AgentHeader,
): Promise<{ info: SessionInfo; created: boolean }> {
  const existing = await store.registry.get(id);
  if (existing) {
    if (existing.source !== AGENT_SOURCE) {
      throw new SessionError("CONFLICT", `Session "${id}" exists in the store and is not an agent session`);
    }
    return { info: existing, created: false };
  }
  try {
    return { info: await createEntry(store, id, header), created: true };
  } catch (error) {
    // Another process registered it first (two processes moving the same old tables): use its row.
    const info = (error as SessionError).code === "CONFLICT" ? await store.registry.get(id) : null;
    if (!info) throw error;
    return { info, created: false };
  }
}

/** Inserts the registry row of a new agent session; `CONFLICT` (from the store) when the id is registered. */
export function createEntry(store: AgentCapableStore, id: string, header: AgentHeader): Promise<SessionInfo> {
  const model = header.usage.find((entry) => typeof entry?.model === "string")?.model ?? null;
  return store.registry.create({
    id,
    name: sessionName(id, header.metadata),
    parentSessionId: header.parentId,
    model,
    source: AGENT_SOURCE,
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

/**
 * Appends `messages` as a chain under `parent`, the last one carrying `usage`; with `guard`, the first append
 * fails with `CONFLICT` unless `parent` is still the latest leaf (another writer would otherwise branch the path).
 * A message whose id is stored already is accepted only when it is the same message (a retried append).
 */
export async function appendChain(
  provider: SessionProvider,
  messages: readonly AgentMessage[],
  parent: string | null,
  usage: readonly UsageEntry[],
  guard: boolean,
  policy: WritePolicy = OPEN_POLICY,
): Promise<void> {
  const rows = messages.map((message, i) =>
    toSessionMessage(message, i === messages.length - 1 ? usage : undefined),
  );
  // The rows are written one at a time: a step whose second message is over the store's size cap (or otherwise
  // unstorable) must be refused before its first one is stored, or the session keeps half a step.
  if (rows.length > 1) for (const row of rows) applyPolicy(row, policy, undefined);
  let at = parent;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const stored = rows[i]!;
    const result = await provider.appendMessage(stored, at, guard ? { expectedLeafId: at } : {});
    if (result) assertSameMessage(message, result);
    at = message.id;
  }
}

/** Replaces the message of the same id in place (nothing is written when it is identical). */
export async function replaceInPlace(provider: SessionProvider, message: SessionMessage): Promise<void> {
  if (provider.upsertMessage) await provider.upsertMessage(message);
  else await provider.updateMessage(message);
}
