import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { StoreProvider } from "../store/provider.js";
import { prepareAppend, prepareServerWrite, type WritePolicy, withStored } from "../store/write-policy.js";
import type {
  AppendOptions,
  AppendResult,
  ImportMessageOptions,
  SessionMessage,
  SessionProvider,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
} from "../types.js";

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

/** The stored form a provider reported, else the JSON just written (parsed on first access). */
function stored<T extends object>(
  result: T & { message?: SessionMessage | undefined },
  json: string,
): T & { message: SessionMessage } {
  // `in`, not a read: the stored form is parsed lazily, only when the caller looks at it.
  if ("message" in result) return result as T & { message: SessionMessage };
  return withStored({ ...result }, json);
}

/**
 * True when `provider` is one of this package's and prepares each write under the Session's policy itself (the
 * provider the Session made from its store, or any of ours when the policy adds nothing): the Session then hands
 * it the message as given, and the write is prepared once. Any other provider gets a prepared message.
 */
function preparesFor(
  provider: SessionProvider,
  policy: WritePolicy,
): provider is StoreProvider & SessionProvider {
  return provider instanceof StoreProvider && provider.enforces(policy);
}

/** The result of one of this package's providers, with the stored form (a subclass may have left it out). */
async function answered<T extends { message?: SessionMessage | undefined }>(
  provider: SessionProvider,
  result: T | undefined,
  message: SessionMessage,
): Promise<T & { message: SessionMessage }> {
  const answer = (result ?? { inserted: true }) as T;
  if ("message" in answer) return answer as T & { message: SessionMessage };
  return { ...answer, message: (await provider.getMessage(message.id)) ?? message };
}

/**
 * Appends through a provider under the Session's policy: an echoed overlay is ignored, reserved metadata keys
 * are stripped from client writes, a message over the cap is refused with `TOO_LARGE`. The stored form is typed
 * as the app's message type `M` (the typed view of `Session<M>`: what is read back is what the app wrote).
 */
export async function appendThrough<M extends SessionMessage>(
  provider: SessionProvider<M>,
  policy: WritePolicy,
  message: M,
  parentId: string | null | undefined,
  options: AppendOptions | undefined,
): Promise<SessionAppendResult<M>>;
export async function appendThrough(
  provider: SessionProvider,
  policy: WritePolicy,
  message: SessionMessage,
  parentId: string | null | undefined,
  options: AppendOptions | undefined,
): Promise<SessionAppendResult> {
  if (preparesFor(provider, policy)) {
    return answered<AppendResult>(
      provider,
      await provider.appendMessage(message, parentId, options),
      message,
    );
  }
  const write = prepareAppend(message, parentId, policy, options?.source);
  if (!write) return { inserted: false, message };
  const { message: toStore, json } = write;
  const result: AppendResult = (await provider.appendMessage(toStore, parentId, options)) ?? {
    inserted: true,
  };
  if ("message" in result || result.inserted) return stored(result, json);
  // A provider that does not report the stored form: the first content is what a read returns.
  const existing = await provider.getMessage(toStore.id);
  return { inserted: false, message: existing ?? parseMessage(json) ?? toStore };
}

/** Inserts or replaces through a provider; without `upsertMessage` on it, reads and then updates or appends. */
export async function upsertThrough<M extends SessionMessage>(
  provider: SessionProvider<M>,
  policy: WritePolicy,
  message: M,
  parentId: string | null | undefined,
  options: UpsertOptions | undefined,
): Promise<SessionUpsertResult<M>>;
export async function upsertThrough(
  provider: SessionProvider,
  policy: WritePolicy,
  message: SessionMessage,
  parentId: string | null | undefined,
  options: UpsertOptions | undefined,
): Promise<SessionUpsertResult> {
  if (preparesFor(provider, policy) && provider.upsertMessage) {
    return answered<UpsertResult>(
      provider,
      await provider.upsertMessage(message, parentId, options),
      message,
    );
  }
  const write = prepareAppend(message, parentId, policy, options?.source);
  if (!write) return { inserted: false, updated: false, message };
  const { message: toStore, json } = write;
  if (provider.upsertMessage) return stored(await provider.upsertMessage(toStore, parentId, options), json);
  if ((await provider.getMessage(toStore.id)) !== null) {
    const { updated } = await updateThrough(provider, policy, toStore);
    return withStored({ inserted: false, updated }, json);
  }
  const appended = await provider.appendMessage(
    toStore,
    parentId,
    options?.source ? { source: options.source } : undefined,
  );
  if (appended?.inserted !== false) return withStored({ inserted: true, updated: false }, json);
  // Inserted by another writer between the read and the append: replace it, as an upsert promises.
  const { updated } = await updateThrough(provider, policy, toStore);
  return withStored({ inserted: false, updated }, json);
}

/** Updates through a provider; identical content writes nothing on providers that can tell (`updated: false`). */
export async function updateThrough<M extends SessionMessage>(
  provider: SessionProvider<M>,
  policy: WritePolicy,
  message: M,
): Promise<SessionUpdateResult<M>>;
export async function updateThrough(
  provider: SessionProvider,
  policy: WritePolicy,
  message: SessionMessage,
): Promise<SessionUpdateResult> {
  if (preparesFor(provider, policy)) {
    return answered<UpdateResult>(
      provider,
      (await provider.updateMessage(message)) ?? { updated: true },
      message,
    );
  }
  const { message: toStore, json } = prepareServerWrite(message, policy);
  return stored((await provider.updateMessage(toStore)) ?? { updated: true }, json);
}

/** Writes one historical message verbatim through a provider that can (`UNSUPPORTED` otherwise). */
export async function importThrough<M extends SessionMessage>(
  provider: SessionProvider<M>,
  policy: WritePolicy,
  message: M,
  options: ImportMessageOptions | undefined,
): Promise<SessionAppendResult<M>>;
export async function importThrough(
  provider: SessionProvider,
  policy: WritePolicy,
  message: SessionMessage,
  options: ImportMessageOptions | undefined,
): Promise<SessionAppendResult> {
  if (!provider.importMessage) {
    prepareServerWrite(message, policy);
    throw new SessionError("UNSUPPORTED", "This session provider cannot import messages (no importMessage)");
  }
  if (preparesFor(provider, policy)) {
    return answered<AppendResult>(provider, await provider.importMessage(message, options), message);
  }
  const { json } = prepareServerWrite(message, policy);
  return stored(await provider.importMessage(message, options), json);
}
