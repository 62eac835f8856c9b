import type { ContextCapableStore } from "../../contract/context.js";
import type { SessionMessage } from "../../contract/message.js";
import type { AppendResult, SessionProvider } from "../../contract/provider.js";
import type { RegistryCapableStore, SessionInfo, SessionUsage } from "../../contract/registry.js";
import type { StepCapableStore } from "../../contract/step.js";
import { SessionError } from "../../errors.js";
import { applyPolicy, storePolicy } from "../../store/write-policy.js";
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

/** Messages per transaction when a whole state is written (a save, create or fork): see {@link appendTail}. */
export const WRITE_BATCH = 1000;

/**
 * Appends a saved state's new tail under `parent` in steps of {@link WRITE_BATCH} messages, each one transaction
 * (`store.writeStep`), so a fork of n messages costs n / WRITE_BATCH commits instead of n. The header block and
 * `usage` (the registry counters) go with the last step: a new session or fork that dies part-way never loads as
 * if it were whole (a resume would carry on with part of the conversation); it lists until `delete(id)` removes
 * it. Every row is checked against the store's policy first, so a message over the size cap is refused before
 * anything is stored.
 */
export async function appendTail(
  store: AgentCapableStore,
  sessionId: string,
  messages: readonly AgentMessage[],
  parent: string | null,
  last: { block: { key: string; content: string }; usage: SessionUsage | undefined },
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
      check: (i, result) => assertSameMessage(messages[from + i]!, result),
    });
    if (to > from) at = messages[to - 1]!.id;
  }
}

/** Replaces the message of the same id in place (nothing is written when it is identical). */
export async function replaceInPlace(provider: SessionProvider, message: SessionMessage): Promise<void> {
  if (provider.upsertMessage) await provider.upsertMessage(message);
  else await provider.updateMessage(message);
}
