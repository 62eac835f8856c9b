/**
 * A Session's writes (`SessionWrites`, the base class of `Session`) with what follows each: the write itself goes through the Session's writer (its store's
 * provider made for it, or the user's provider adapted once: store/foreign-provider.ts), which prepares it under
 * the Session's policy; then the reference's status frame, automatic compaction after an insert, and the
 * framework hook `internal_onMessagesChanged`, in that order (none of them for an echoed overlay, which writes
 * nothing).
 */

import type { SessionMessage } from "../contract/message.js";
import type {
  AppendOptions,
  DeleteOptions,
  ImportMessageOptions,
  SessionProvider,
  UpsertOptions,
} from "../contract/provider.js";
import { isEchoedOverlay } from "../message/overlay.js";
import { appendChain } from "./chain.js";
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

/**
 * The public writes of a `Session` (its base class, so `Session.appendMessage` is the method that runs, with no
 * forwarding hop): each writes through the Session's writer, then frames, compacts and tells the hook.
 */
export abstract class SessionWrites<M extends SessionMessage = SessionMessage> {
  /** @internal what the builder set (the hook, the policy). */
  protected abstract readonly config: SessionConfig;

  /** @internal the resolved parts every async method works through (resolving them on first use). */
  protected abstract parts(): Promise<SessionParts<M>>;

  /** Appends after the latest leaf, under `parentId` or as a new root (`null`); resolves the stored form. */
  async appendMessage(
    message: M,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<SessionAppendResult<M>> {
    const { provider, writer, compactor } = await this.parts();
    const written = (await writer.appendMessage(message, parentId, options)) ?? { inserted: true };
    const result = await answered<typeof written, SessionAppendResult<M>>(provider, written, message);
    // An echoed overlay wrote nothing (§17.1): no frame, no compaction, no hook event.
    if (isEchoedOverlay(message)) return result;
    // The reference's status frame follows every append, also of an id already stored.
    const estimate = await compactor.broadcastIdle();
    // The message is stored; compaction problems go to onCompactionError and never fail the append.
    const compacted = result.inserted && (await compactor.afterAppend(estimate));
    notifyChanged(
      this.config.messagesChanged,
      compacted
        ? { type: "compact" }
        : { type: "append", message: result.message, parentId, inserted: result.inserted },
    );
    return result;
  }

  /**
   * Appends `messages` in order after the latest leaf (or under `parentId`: a new branch, `null` a new root), all
   * or nothing in one store transaction: a refused message
   * stores none of them, and no other writer's message falls between them (src/session/chain.ts). Needs a Session
   * on a store (memory, SQLite, Postgres; else `UNSUPPORTED`); registers an unregistered session, unowned.
   */
  async appendMessages(messages: M[], parentId?: string | null): Promise<void> {
    await appendChain(await this.parts(), this.config, messages, parentId);
  }

  /** Inserts the message, or replaces the stored one with its id in place (identical content writes nothing). */
  async upsertMessage(
    message: M,
    parentId?: string | null,
    options?: UpsertOptions,
  ): Promise<SessionUpsertResult<M>> {
    const { provider, writer, compactor } = await this.parts();
    const written = (await writer.upsertMessage(message, parentId, options)) ?? { inserted: true };
    const result = await answered<typeof written, SessionUpsertResult<M>>(provider, written, message);
    if (isEchoedOverlay(message)) return result;
    const estimate = await compactor.broadcastIdle();
    const compacted = result.inserted && (await compactor.afterAppend(estimate));
    const listener = this.config.messagesChanged;
    if (compacted) notifyChanged(listener, { type: "compact" });
    else if (result.inserted) {
      notifyChanged(listener, { type: "append", message: result.message, parentId, inserted: true });
    } else if (result.updated) notifyChanged(listener, { type: "update", message: result.message });
    return result;
  }

  /** Writes one historical message verbatim with its original time (migrations); a stored id is skipped. */
  async importMessage(message: M, options?: ImportMessageOptions): Promise<SessionAppendResult<M>> {
    // No frame, no compaction, no hook: a migration, not a turn.
    const { provider, writer } = await this.parts();
    const written = (await writer.importMessage(message, options)) ?? { inserted: true };
    return answered<typeof written, SessionAppendResult<M>>(provider, written, message);
  }

  /** Replaces a stored message by id (`NOT_FOUND` if unknown); identical content writes nothing. */
  async updateMessage(message: M): Promise<SessionUpdateResult<M>> {
    return this.replace(message, true);
  }

  /**
   * The reference's maintenance write: replaces a stored message like `updateMessage`, without a status frame
   * or a compaction check (e.g. shrinking old media); the `internal_onMessagesChanged` hook still hears it.
   */
  async internal_rewriteMessage(message: M): Promise<SessionUpdateResult<M>> {
    return this.replace(message, false);
  }

  /**
   * Deletes messages; their children are spliced onto their parents, and a deleted tip gives way to the newest leaf
   * below its nearest surviving ancestor (a deleted regenerated answer brings back the one it replaced), or to that
   * ancestor itself with `{ tip: "ancestor" }` (see DeleteTip); never to a leaf outside that ancestor's subtree.
   */
  async deleteMessages(messageIds: string[], options?: DeleteOptions): Promise<void> {
    const { provider, compactor } = await this.parts();
    await provider.deleteMessages(messageIds, options);
    await compactor.broadcastIdle();
    notifyChanged(this.config.messagesChanged, { type: "delete", messageIds: [...messageIds] });
  }

  /** Removes every message and overlay of this session, forgets loaded skills and re-renders the prompt. */
  async clearMessages(): Promise<void> {
    const { provider, context, compactor } = await this.parts();
    await provider.clearMessages();
    context.skills.clear();
    await context.refresh();
    await compactor.broadcastIdle();
    notifyChanged(this.config.messagesChanged, { type: "clear" });
  }

  // Replaces a stored message, then tells the hook; `frame: false` sends no status frame.
  private async replace(message: M, frame: boolean): Promise<SessionUpdateResult<M>> {
    const { provider, writer, compactor } = await this.parts();
    const written = (await writer.updateMessage(message)) ?? { updated: true };
    const result = await answered<typeof written, SessionUpdateResult<M>>(provider, written, message);
    if (frame) await compactor.broadcastIdle();
    notifyChanged(this.config.messagesChanged, { type: "update", message: result.message });
    return result;
  }
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
