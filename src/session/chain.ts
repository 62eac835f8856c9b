/**
 * `Session.appendMessages`: a chain of messages after the latest leaf in one store transaction (the store's step,
 * contract/step.ts), so a refused message stores none of them and no other writer's message falls between them.
 * A step updates the session's registry row in the same transaction, so a session without one is registered
 * first, unowned (as `SessionManager.create` would; `manager.forOwner(user).open(id)` already refuses an
 * unregistered id holding messages, so nothing about ownership changes). Its argument check is hand-written, not a
 * schema: it runs on every append (docs/HARDENING.md, "What stays hand-written").
 */
import type { SessionMessage } from "../contract/message.js";
import { hasSessionRegistry } from "../contract/registry.js";
import { hasStepWrites } from "../contract/step.js";
import { SessionError } from "../errors.js";
import type { SessionConfig } from "./config.js";
import { notifyChanged } from "./hooks.js";
import type { SessionParts } from "./lifecycle.js";

/** Writes the chain (see the module comment), then the status frame, automatic compaction and the hook. */
export async function appendChain<M extends SessionMessage>(
  { store, compactor }: SessionParts<M>,
  config: SessionConfig,
  messages: readonly M[],
  parentId?: string | null,
): Promise<void> {
  if (!Array.isArray(messages)) {
    throw new SessionError("INVALID_ARGUMENT", "appendMessages needs an array of messages", {
      issues: [{ path: "messages", rule: "type" }],
    });
  }
  if (messages.length === 0) return;
  if (store === undefined || !hasStepWrites(store) || !hasSessionRegistry(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      "appendMessages needs a Session on a store that writes steps (MemoryStore, SqliteStore, PostgresStore)",
    );
  }
  const { sessionId } = config;
  if ((await store.registry.get(sessionId)) === null) {
    try {
      await store.registry.create({ id: sessionId, name: sessionId });
    } catch (error) {
      // Registered meanwhile by another writer: its row serves as well.
      if (!(error instanceof SessionError && error.code === "CONFLICT")) throw error;
    }
  }
  await store.writeStep({
    sessionId,
    messages,
    parentId,
    // After the latest leaf: each append expects its parent still to be the leaf. Under a given parent (a new
    // branch) the chain is one transaction all the same.
    guard: parentId === undefined,
    policy: config.policy,
    check: (index, result) => {
      if (!result.inserted)
        throw new SessionError("CONFLICT", `Message "${messages[index]!.id}" is stored already`);
    },
  });
  const estimate = await compactor.broadcastIdle();
  const compacted = await compactor.afterAppend(estimate);
  if (compacted) notifyChanged(config.messagesChanged, { type: "compact" });
  else {
    let at = parentId;
    for (const message of messages) {
      notifyChanged(config.messagesChanged, { type: "append", message, parentId: at, inserted: true });
      at = message.id;
    }
  }
}
