/**
 * The write pipeline every provider of this package runs: prepare once (shape, parent, the write policy, size,
 * offload check) → the backend writes the row(s) and answers with a record (store/written.ts: the result, the
 * stored JSON, the logged cursor) → the change is published to the store's feed, and the caller gets the result. A backend implements only the `write*` methods; the public write methods below are the ones
 * that run (nothing is patched in), and they are the only place this package prepares and publishes a message
 * write of a provider.
 */

import { z } from "zod";
import type { CompactionDetails, SessionMessage, StoredCompaction } from "../contract/message.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  DeleteTip,
  ImportMessageOptions,
  Siblings,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
} from "../contract/provider.js";
import type { OwnerDigest } from "../contract/registry.js";
import { isSessionStore, type SessionBinding, type WritePolicy } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { ownTime } from "../message/created-at.js";
import { assertId, assertParentId } from "../message/ids.js";
import { optionsArg } from "../options-arg.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";
import { newCompaction } from "./compactions.js";
import { sessionDigestsOf } from "./content-digests.js";
import type { ChangeFeed } from "./feed/feed.js";
import {
  publishAppend,
  publishCompaction,
  publishDelete,
  publishImport,
  publishUpdate,
  publishUpsert,
  publishWhole,
} from "./feed/publish.js";
import { MAX_SIBLINGS, siblingsOf } from "./siblings.js";
import {
  importTime,
  keepReserved,
  type PreparedWrite,
  prepareAppend,
  prepareServerWrite,
} from "./write-policy.js";
import { answer, type Logged, type Written } from "./written.js";

/** deleteMessages' options: where a deleted tip goes (contract/provider.ts DeleteTip). */
const deleteOptions = z.object({
  tip: z
    .enum(["newest-leaf", "ancestor"], rule(`deleteMessages' tip is "newest-leaf" or "ancestor"`, "one_of"))
    .default("newest-leaf"),
});

/** What a provider needs of its store to run the pipeline: the store's policy and its feed. */
export interface ProviderContext {
  readonly policy: WritePolicy;
  readonly feed: ChangeFeed;
}

/**
 * Puts back, into a client's replacement, the stored values of the metadata keys it may not set; the backend
 * calls it with the stored message, read inside its replacing transaction (undefined: no key applies).
 */
export type KeepReserved =
  | ((write: PreparedWrite, stored: SessionMessage | null | undefined) => PreparedWrite)
  | undefined;

/** The base of this package's session providers: the write pipeline (see the module comment). */
export abstract class StoreProvider {
  /**
   * @param binding the Session this provider was made for (`store.session(id, binding)`): every write applies its
   * policy, read at the write, before the store's, so the Session hands messages over unprepared.
   */
  constructor(
    private readonly context: ProviderContext,
    readonly sessionId: string,
    readonly binding?: SessionBinding,
  ) {}

  /** Inserts a new row for the message (`inserted: false` with the stored JSON when the id is taken). */
  protected abstract writeAppend(
    write: PreparedWrite,
    parentId: string | null | undefined,
    options: AppendOptions | undefined,
  ): Promise<Written<AppendResult>>;
  /** Inserts or replaces the row; `keep` merges the stored reserved keys into a replacement (see KeepReserved). */
  protected abstract writeUpsert(
    write: PreparedWrite,
    parentId: string | null | undefined,
    keep: KeepReserved,
    options: UpsertOptions | undefined,
  ): Promise<Written<UpsertResult>>;
  /** Inserts a historical row with its original time. */
  protected abstract writeImport(
    write: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<Written<AppendResult>>;
  /** Replaces the stored row (`NOT_FOUND` when there is none). */
  protected abstract writeUpdate(write: PreparedWrite): Promise<Written<UpdateResult>>;
  /**
   * Deletes rows (validated, non-empty ids) and splices their children onto their parents; answers the cursor
   * of the change-log row when the backend logged the delete in its transaction. A deleted tip goes where `tip`
   * says (contract/provider.ts DeleteTip).
   */
  protected abstract writeDelete(ids: string[], tip: DeleteTip): Promise<Logged>;
  /** Deletes every message and overlay of the session; answers as writeDelete does. */
  protected abstract writeClear(): Promise<Logged>;
  /** Stores a validated overlay; answers it as a read returns it, with its logged cursor, if any. */
  protected abstract writeCompaction(compaction: StoredCompaction): Promise<Written<StoredCompaction>>;
  /**
   * At most `limit` siblings of a stored message (its parent's children, or its session's roots for a root),
   * oldest first, payloads restored; null when the message is not stored.
   */
  protected abstract readSiblings(messageId: string, limit: number): Promise<SessionMessage[] | null>;

  /** The message among its siblings, or null when it is not stored (`SessionProvider.getSiblings`). */
  async getSiblings(messageId: string): Promise<Siblings | null> {
    assertId(messageId, "A message id", "messageId");
    // One row more than the cap: a message with more siblings is refused, never answered with a shortened list.
    return siblingsOf(messageId, await this.readSiblings(messageId, MAX_SIBLINGS + 1));
  }

  /**
   * The keyed digests of this session's owner (docs/PRIVACY.md, "Ids derived from content"), which the AI SDK door
   * derives an edited message's id with: none for an owner in clear (store/content-digests.ts).
   */
  async contentDigests(): Promise<OwnerDigest[]> {
    return isSessionStore(this.context) ? sessionDigestsOf(this.context, this.sessionId) : [];
  }

  // The bound Session's policy, applied before the store's.
  private get first(): WritePolicy | undefined {
    return this.binding?.policy();
  }

  async appendMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    const write = prepareAppend(message, parentId, this.context.policy, options?.source, this.first);
    // An echoed overlay is ignored: nothing is written, nothing published.
    if (!write) return { inserted: false, message };
    const written = await this.writeAppend(write, parentId, options);
    const result = answer(written);
    await publishAppend(
      this.context.feed,
      this.sessionId,
      write.message.id,
      parentId,
      result,
      written.logged,
    );
    return result;
  }

  async upsertMessage(
    message: SessionMessage,
    parentId?: string | null,
    options?: UpsertOptions,
  ): Promise<UpsertResult> {
    const first = this.first;
    const write = prepareAppend(message, parentId, this.context.policy, options?.source, first);
    if (!write) return { inserted: false, updated: false, message };
    const keep = options?.source === "client" ? this.keeper(first) : undefined;
    const written = await this.writeUpsert(write, parentId, keep, options);
    const result = answer(written);
    await publishUpsert(
      this.context.feed,
      this.sessionId,
      write.message.id,
      parentId,
      result,
      written.logged,
    );
    return result;
  }

  async importMessage(message: SessionMessage, options: ImportMessageOptions = {}): Promise<AppendResult> {
    const write = prepareServerWrite(message, this.context.policy, this.first);
    assertParentId(options.parentId);
    // An explicit time wins; else the time the message carries; else now (docs/STORAGE.md, "A message's time").
    const createdAt =
      options.createdAt !== undefined ? importTime(options.createdAt) : importTime(ownTime(write.message));
    const written = await this.writeImport(write, options.parentId, createdAt);
    const result = answer(written);
    if (result.inserted) {
      const { feed } = this.context;
      await publishImport(feed, this.sessionId, message.id, options.parentId, result, written.logged);
    }
    return result;
  }

  async updateMessage(message: SessionMessage): Promise<UpdateResult> {
    const write = prepareServerWrite(message, this.context.policy, this.first);
    const written = await this.writeUpdate(write);
    const result = answer(written);
    if (result.updated) {
      await publishUpdate(this.context.feed, this.sessionId, message.id, result, written.logged);
    }
    return result;
  }

  async deleteMessages(messageIds: string[], options?: DeleteOptions): Promise<void> {
    if (!Array.isArray(messageIds)) {
      throw new SessionError("INVALID_ARGUMENT", "deleteMessages expects an array of message ids", {
        issues: [{ path: "messageIds", rule: "type" }],
      });
    }
    for (const [index, id] of messageIds.entries()) assertId(id, "A message id", `messageIds.${index}`);
    const tip = parseInput(deleteOptions, optionsArg(options, "deleteMessages"), { path: "options" }).tip;
    const logged = messageIds.length > 0 ? (await this.writeDelete(messageIds, tip)).logged : undefined;
    await publishDelete(this.context.feed, this.sessionId, messageIds, logged);
  }

  async clearMessages(): Promise<void> {
    const { logged } = await this.writeClear();
    await publishWhole(this.context.feed, "clear", this.sessionId, logged);
  }

  async addCompaction(
    summary: string,
    fromMessageId: string,
    toMessageId: string,
    details?: CompactionDetails,
  ): Promise<StoredCompaction> {
    const { result: compaction, logged } = await this.writeCompaction(
      newCompaction(summary, fromMessageId, toMessageId, details),
    );
    await publishCompaction(this.context.feed, this.sessionId, compaction, logged);
    return compaction;
  }

  // The keys a client's write had stripped, under every policy it went through, and the smallest cap.
  private keeper(first: WritePolicy | undefined): KeepReserved {
    const { policy } = this.context;
    const keys = first
      ? [...first.reservedMetadataKeys, ...policy.reservedMetadataKeys]
      : policy.reservedMetadataKeys;
    if (keys.length === 0) return undefined;
    const cap = Math.min(policy.maxMessageBytes, first?.maxMessageBytes ?? Number.POSITIVE_INFINITY);
    return (write, stored) => keepReserved(write, stored, keys, cap);
  }
}
