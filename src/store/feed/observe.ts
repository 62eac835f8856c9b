import { isEchoedOverlay } from "../../message.js";
import type {
  AppendResult,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
  UpdateResult,
  UpsertResult,
} from "../../types.js";
import type { PreparedJson } from "../prepared-json.js";
import type { StepWrite } from "../step.js";
import type { SessionImportResult, SessionRegistry, SessionTransfer, TransferItem } from "../types.js";
import { loggedCursor } from "./change-rows.js";
import type { ChangeEvent, ChangeFeed } from "./feed.js";

type Writes = Pick<
  SessionProvider,
  | "appendMessage"
  | "updateMessage"
  | "upsertMessage"
  | "importMessage"
  | "deleteMessages"
  | "clearMessages"
  | "addCompaction"
>;

/** An event whose `message` is read from the write result only when a listener looks at it (it may be 50 MB). */
function withMessage<T extends object>(event: T, result: { message?: SessionMessage }): T {
  return Object.defineProperty(event, "message", {
    enumerable: true,
    get: () => result.message,
  });
}

/**
 * Makes every write of a provider publish its change after it returned (committed): the one place where all
 * backends feed the change feed. A write whose result carries a logged cursor (`markLogged`: SQLite and Postgres
 * commit an append's, import's, update's and upsert's log row with the write itself) is not recorded again. Installs own methods on the instance that call the class's methods with every
 * argument they were given, synchronously first (a Session's JSON hand-off, see prepared-json.ts, is read there).
 */
export function observeProvider<P extends SessionProvider & { readonly sessionId: string }>(
  provider: P,
  feed: ChangeFeed,
): P {
  const target = provider as P & Writes;
  const sessionId = () => provider.sessionId;
  const base = { origin: "local" as const };
  const append = target.appendMessage;
  target.appendMessage = async function (message, parentId, options) {
    const result = (await append.call(this, message, parentId, options)) as AppendResult | undefined;
    // An echoed overlay was ignored (nothing written): no event. A duplicate id still is one (inserted: false).
    if (isEchoedOverlay(message)) return result;
    // A reference-style provider returns nothing: it stored the message (or already had it).
    const outcome = result ?? { inserted: true, message };
    const parent = parentId === undefined ? {} : { parentId };
    await feed.publish(
      { sessionId: sessionId(), type: "append", ids: [message.id], parentId, inserted: outcome.inserted },
      (cursor) =>
        withMessage(
          { type: "append", sessionId: sessionId(), cursor, inserted: outcome.inserted, ...parent, ...base },
          outcome,
        ) as ChangeEvent,
      loggedCursor(result),
    );
    return result;
  };
  // This package's providers take a second, internal argument (a Session's JSON hand-off): forwarded as given.
  const update = target.updateMessage as (
    message: SessionMessage,
    options?: PreparedJson,
  ) => Promise<unknown>;
  target.updateMessage = async function (message, options?: PreparedJson) {
    const result = (await update.call(this, message, options)) as UpdateResult | undefined;
    if (result && !result.updated) return result;
    const outcome = result ?? { message };
    await feed.publish(
      { sessionId: sessionId(), type: "update", ids: [message.id] },
      (cursor) =>
        withMessage({ type: "update", sessionId: sessionId(), cursor, ...base }, outcome) as ChangeEvent,
      loggedCursor(result),
    );
    return result;
  };
  const upsert = target.upsertMessage;
  if (upsert) {
    target.upsertMessage = async function (message, parentId, options) {
      const result: UpsertResult = await upsert.call(this, message, parentId, options);
      if (!result.inserted && !result.updated) return result;
      const type = result.inserted ? "append" : "update";
      const parent = result.inserted && parentId !== undefined ? { parentId } : {};
      await feed.publish(
        { sessionId: sessionId(), type, ids: [message.id], parentId },
        (cursor) =>
          withMessage(
            result.inserted
              ? { type, sessionId: sessionId(), cursor, inserted: true, ...parent, ...base }
              : { type, sessionId: sessionId(), cursor, ...base },
            result,
          ) as ChangeEvent,
        loggedCursor(result),
      );
      return result;
    };
  }
  const importOne = target.importMessage;
  if (importOne) {
    target.importMessage = async function (message, options) {
      const result: AppendResult = await importOne.call(this, message, options);
      if (!result.inserted) return result;
      await feed.publish(
        { sessionId: sessionId(), type: "import", ids: [message.id], parentId: options?.parentId },
        (cursor) =>
          withMessage(
            { type: "import", sessionId: sessionId(), cursor, inserted: true, ...base },
            result,
          ) as ChangeEvent,
        loggedCursor(result),
      );
      return result;
    };
  }
  const remove = target.deleteMessages;
  target.deleteMessages = async function (ids) {
    await remove.call(this, ids);
    const copy = [...ids];
    await feed.publish({ sessionId: sessionId(), type: "delete", ids: copy }, (cursor) => ({
      type: "delete",
      sessionId: sessionId(),
      cursor,
      ids: copy,
      ...base,
    }));
  };
  const clear = target.clearMessages;
  target.clearMessages = async function () {
    await clear.call(this);
    await feed.publish({ sessionId: sessionId(), type: "clear", ids: [] }, (cursor) => ({
      type: "clear",
      sessionId: sessionId(),
      cursor,
      ...base,
    }));
  };
  const compact = target.addCompaction;
  target.addCompaction = async function (summary, fromId, toId, details) {
    const compaction: StoredCompaction = await compact.call(this, summary, fromId, toId, details);
    await feed.publish({ sessionId: sessionId(), type: "compaction", ids: [], compaction }, (cursor) => ({
      type: "compaction",
      sessionId: sessionId(),
      cursor,
      compaction,
      ...base,
    }));
    return compaction;
  };
  return provider;
}

/**
 * Makes a transfer's session import publish one `reset` of the session (a bulk write: consumers re-read it rather
 * than receive every imported message).
 */
export function observeTransfer<T extends SessionTransfer>(transfer: T, feed: ChangeFeed): T {
  const importSession = transfer.importSession;
  transfer.importSession = async function (items: AsyncIterable<TransferItem>): Promise<SessionImportResult> {
    const result = await importSession.call(this, items);
    if (result.messages.inserted > 0 || result.compactions.inserted > 0) {
      const reason = `session "${result.sessionId}" was imported`;
      await feed.publish({ sessionId: result.sessionId, type: "reset", ids: [] }, (cursor) => ({
        type: "reset",
        reason,
        sessionId: result.sessionId,
        cursor,
        origin: "local",
      }));
    }
    return result;
  };
  return transfer;
}

/** Makes a registry delete (SessionManager, CLI prune) publish a `clear` of the session. */
export function observeRegistry<R extends SessionRegistry>(registry: R, feed: ChangeFeed): R {
  const remove = registry.delete;
  registry.delete = async function (id, options) {
    const removed = await remove.call(this, id, options);
    await feed.publish({ sessionId: id, type: "clear", ids: [] }, (cursor) => ({
      type: "clear",
      sessionId: id,
      cursor,
      origin: "local",
    }));
    return removed;
  };
  return registry;
}

/**
 * Runs a store's one-transaction step write (the agent storages' `writeStep`, which appends below the providers)
 * and then publishes each append it committed, as a provider's append would.
 */
export async function publishStepWrites(
  feed: ChangeFeed,
  step: StepWrite,
  write: (step: StepWrite) => Promise<void>,
): Promise<void> {
  const results: AppendResult[] = [];
  await write({
    ...step,
    check: (index, result) => {
      step.check?.(index, result);
      results[index] = result;
    },
  });
  for (const [index, result] of results.entries()) {
    const message = step.messages[index];
    if (!message) continue;
    const parentId = index === 0 ? step.parentId : step.messages[index - 1]?.id;
    const parent = parentId === undefined ? {} : { parentId };
    await feed.publish(
      { sessionId: step.sessionId, type: "append", ids: [message.id], parentId, inserted: result.inserted },
      (cursor) =>
        withMessage(
          {
            type: "append",
            sessionId: step.sessionId,
            cursor,
            inserted: result.inserted,
            ...parent,
            origin: "local",
          },
          result,
        ) as ChangeEvent,
      loggedCursor(result),
    );
  }
}
