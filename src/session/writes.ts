/**
 * A Session's writes with what follows each: the write itself goes through the Session's writer (its store's
 * provider made for it, or the user's provider adapted once: store/foreign-provider.ts), which prepares it under
 * the Session's policy; then the reference's status frame, automatic compaction after an insert, and the
 * framework hook `internal_onMessagesChanged`, in that order (none of them for an echoed overlay, which writes
 * nothing).
 */

import type { SessionMessage } from "../contract/message.js";
import type {
  AppendOptions,
  ImportMessageOptions,
  SessionProvider,
  UpsertOptions,
} from "../contract/provider.js";
import { isEchoedOverlay } from "../message/overlay.js";
import type { CompactionPlan, CompactionReport } from "./compaction-types.js";
import type { SessionConfig } from "./config.js";
import { notifyChanged } from "./hooks.js";
import type { SessionParts } from "./lifecycle.js";

/** What `Session.appendMessage` resolves: whether a row was inserted, and the stored form of the message. */
export interface SessionAppendResult<M extends SessionMessage = SessionMessage> {
  inserted: boolean;
  /** The message as a later read returns it (the first content when the id already existed). */
  message: M;
}

/** What `Session.upsertMessage` resolves. */
export interface SessionUpsertResult<M extends SessionMessage = SessionMessage> {
  inserted: boolean;
  /** True when a stored message was replaced by different content. */
  updated: boolean;
  message: M;
}

/** What `Session.updateMessage` resolves. */
export interface SessionUpdateResult<M extends SessionMessage = SessionMessage> {
  /** False when the stored content was already identical (nothing was written). */
  updated: boolean;
  message: M;
}

/**
 * A write's result with the stored form, typed as the app's message type `M` (the typed view of `Session<M>`:
 * what is read back is what the app wrote); a subclass of ours may have left the stored form out.
 */
async function answered<T extends { message?: SessionMessage | undefined }, R>(
  provider: SessionProvider,
  result: T,
  message: SessionMessage,
): Promise<R> {
  if ("message" in result) return result as unknown as R;
  return { ...result, message: (await provider.getMessage(message.id)) ?? message } as R;
}

/** Appends, then frames, compacts when due and tells the hook (`compact` instead of `append` when it did). */
export async function appendMessage<M extends SessionMessage>(
  { provider, writer, compactor }: SessionParts<M>,
  config: SessionConfig,
  message: M,
  parentId: string | null | undefined,
  options: AppendOptions | undefined,
): Promise<SessionAppendResult<M>> {
  const written = (await writer.appendMessage(message, parentId, options)) ?? { inserted: true };
  const result = await answered<typeof written, SessionAppendResult<M>>(provider, written, message);
  // An echoed overlay wrote nothing (§17.1): no frame, no compaction, no hook event.
  if (isEchoedOverlay(message)) return result;
  // The reference's status frame follows every append, also of an id already stored.
  const estimate = await compactor.broadcastIdle();
  // The message is stored; compaction problems go to onCompactionError and never fail the append.
  const compacted = result.inserted && (await compactor.afterAppend(estimate));
  notifyChanged(
    config.messagesChanged,
    compacted
      ? { type: "compact" }
      : { type: "append", message: result.message, parentId, inserted: result.inserted },
  );
  return result;
}

/** Upserts, then frames, compacts after an insert when due and tells the hook what happened. */
export async function upsertMessage<M extends SessionMessage>(
  { provider, writer, compactor }: SessionParts<M>,
  config: SessionConfig,
  message: M,
  parentId: string | null | undefined,
  options: UpsertOptions | undefined,
): Promise<SessionUpsertResult<M>> {
  const written = (await writer.upsertMessage(message, parentId, options)) ?? { inserted: true };
  const result = await answered<typeof written, SessionUpsertResult<M>>(provider, written, message);
  if (isEchoedOverlay(message)) return result;
  const estimate = await compactor.broadcastIdle();
  const compacted = result.inserted && (await compactor.afterAppend(estimate));
  const listener = config.messagesChanged;
  if (compacted) notifyChanged(listener, { type: "compact" });
  else if (result.inserted) {
    notifyChanged(listener, { type: "append", message: result.message, parentId, inserted: true });
  } else if (result.updated) notifyChanged(listener, { type: "update", message: result.message });
  return result;
}

/** Imports one historical message: no frame, no compaction, no hook (a migration, not a turn). */
export async function importMessage<M extends SessionMessage>(
  { provider, writer }: SessionParts<M>,
  message: M,
  options: ImportMessageOptions | undefined,
): Promise<SessionAppendResult<M>> {
  const written = (await writer.importMessage(message, options)) ?? { inserted: true };
  return answered<typeof written, SessionAppendResult<M>>(provider, written, message);
}

/**
 * Replaces a stored message, then tells the hook; `frame: false` is the reference's maintenance write
 * (`internal_rewriteMessage`), which sends no status frame.
 */
export async function updateMessage<M extends SessionMessage>(
  { provider, writer, compactor }: SessionParts<M>,
  config: SessionConfig,
  message: M,
  frame: boolean,
): Promise<SessionUpdateResult<M>> {
  const written = (await writer.updateMessage(message)) ?? { updated: true };
  const result = await answered<typeof written, SessionUpdateResult<M>>(provider, written, message);
  if (frame) await compactor.broadcastIdle();
  notifyChanged(config.messagesChanged, { type: "update", message: result.message });
  return result;
}

/** Deletes messages (children spliced onto their parents), then frames and tells the hook. */
export async function deleteMessages<M extends SessionMessage>(
  { provider, compactor }: SessionParts<M>,
  config: SessionConfig,
  messageIds: string[],
): Promise<void> {
  await provider.deleteMessages(messageIds);
  await compactor.broadcastIdle();
  notifyChanged(config.messagesChanged, { type: "delete", messageIds: [...messageIds] });
}

/** Clears the session, forgets loaded skills and re-renders the prompt, then frames and tells the hook. */
export async function clearMessages<M extends SessionMessage>(
  { provider, context, compactor }: SessionParts<M>,
  config: SessionConfig,
): Promise<void> {
  await provider.clearMessages();
  context.skills.clear();
  await context.refresh();
  await compactor.broadcastIdle();
  notifyChanged(config.messagesChanged, { type: "clear" });
}

/** Compacts the path to `leafId` and tells the hook when an overlay was stored; a dry run only plans. */
export async function compact<M extends SessionMessage>(
  { compactor }: SessionParts<M>,
  config: SessionConfig,
  leafId: string | null | undefined,
  dryRun: boolean,
): Promise<CompactionReport | CompactionPlan | null> {
  if (dryRun) return compactor.plan(leafId);
  const report = await compactor.compact(leafId);
  if (report) notifyChanged(config.messagesChanged, { type: "compact" });
  return report;
}
