/**
 * A `SessionProvider` this package did not make (the user's own, or one of ours handed to `Session.create` directly),
 * adapted once to the write pipeline: the Session's policy prepares each message here, as a store's provider
 * prepares it, and the `write*` methods hand the prepared message to the user's object. The user's provider may
 * leave out what a result reports; the stored form is then the JSON just prepared, or what a read returns.
 */

import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type {
  AppendOptions,
  AppendResult,
  ImportMessageOptions,
  SessionProvider,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
} from "../contract/provider.js";
import type { SessionBinding, WritePolicy } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { ChangeFeed } from "./feed/feed.js";
import { StoreProvider } from "./provider.js";
import { type PreparedWrite, prepareServerWrite } from "./write-policy.js";
import { answer, type Logged, type Written } from "./written.js";

// Nobody can subscribe to it: a foreign provider's writes are the user's to publish.
const UNHEARD = new ChangeFeed();

/**
 * The one place a foreign provider's plain result becomes a write's record: its stored form is the JSON just
 * prepared when the provider left `message` out (nothing is logged: the user's provider has no change log).
 */
function written<T extends object>(
  result: T & { message?: SessionMessage | undefined },
  json: string,
): Written<T> {
  // `in`, not a read: the user's result may hold its stored form behind a getter of its own.
  return "message" in result ? { result } : { result, json };
}

/** The provider a Session writes through: `provider` itself when it was made for `binding`, else `provider` adapted. */
export function writerFor(provider: SessionProvider, binding: SessionBinding): StoreProvider {
  // `binding` is read through a Proxy too (a managed store wraps its providers), so a wrapped one of ours stays itself.
  if (provider instanceof StoreProvider && provider.binding === binding) return provider;
  return new ForeignProvider(provider, binding.policy);
}

/** A user's provider under a Session's write policy (see the module comment). */
export class ForeignProvider extends StoreProvider {
  constructor(
    private readonly inner: SessionProvider,
    private readonly policy: () => WritePolicy,
  ) {
    super(
      {
        get policy() {
          return policy();
        },
        feed: UNHEARD,
      },
      "",
    );
  }

  // Never called: a Session reads through the user's provider itself (its getSiblings, if it has one).
  protected async readSiblings(): Promise<SessionMessage[] | null> {
    throw new SessionError("UNSUPPORTED", "A foreign provider's writer does not read siblings");
  }

  protected async writeAppend(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    options: AppendOptions | undefined,
  ): Promise<Written<AppendResult>> {
    const result: AppendResult = (await this.inner.appendMessage(message, parentId, options)) ?? {
      inserted: true,
    };
    if ("message" in result || result.inserted) return written(result, json);
    // A provider that does not report the stored form: the first content is what a read returns.
    const existing = await this.inner.getMessage(message.id);
    return { result: { inserted: false, message: existing ?? parseMessage(json) ?? message } };
  }

  /** Without `upsertMessage` on the user's provider: reads, then updates or appends (the one upsert fallback). */
  protected async writeUpsert(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    _keep: unknown,
    options: UpsertOptions | undefined,
  ): Promise<Written<UpsertResult>> {
    const { inner } = this;
    if (inner.upsertMessage) return written(await inner.upsertMessage(message, parentId, options), json);
    if ((await inner.getMessage(message.id)) !== null) {
      return { result: { inserted: false, updated: await this.replace(message) }, json };
    }
    const source = options?.source ? { source: options.source } : undefined;
    const appended = await inner.appendMessage(message, parentId, source);
    if (appended?.inserted !== false) return { result: { inserted: true, updated: false }, json };
    // Inserted by another writer between the read and the append: replace it, as an upsert promises.
    return { result: { inserted: false, updated: await this.replace(message) }, json };
  }

  // The fallback's replacement, prepared as any update is.
  private async replace(message: SessionMessage): Promise<boolean> {
    const write = prepareServerWrite(message, this.policy());
    return ((await this.inner.updateMessage(write.message)) ?? { updated: true }).updated;
  }

  /**
   * Hands the user's provider the message and options as given (it keeps them verbatim and reads its own options),
   * once the policy has checked the message; `UNSUPPORTED` when it has no `importMessage`.
   */
  override async importMessage(
    message: SessionMessage,
    options?: ImportMessageOptions,
  ): Promise<AppendResult> {
    const { json } = prepareServerWrite(message, this.policy());
    return answer(written(await this.importer()(message, options), json));
  }

  protected async writeImport(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<Written<AppendResult>> {
    const parent = parentId === undefined ? {} : { parentId };
    return written(await this.importer()(message, { ...parent, createdAt }), json);
  }

  private importer(): NonNullable<SessionProvider["importMessage"]> {
    const { inner } = this;
    if (!inner.importMessage) {
      throw new SessionError(
        "UNSUPPORTED",
        "This session provider cannot import messages (no importMessage)",
      );
    }
    return inner.importMessage.bind(inner);
  }

  protected async writeUpdate({ message, json }: PreparedWrite): Promise<Written<UpdateResult>> {
    return written((await this.inner.updateMessage(message)) ?? { updated: true }, json);
  }

  // A reference provider moves its tip by its own rule: the tip option is not passed on.
  protected async writeDelete(ids: string[]): Promise<Logged> {
    await this.inner.deleteMessages(ids);
    return {};
  }

  protected async writeClear(): Promise<Logged> {
    await this.inner.clearMessages();
    return {};
  }

  protected async writeCompaction(c: StoredCompaction): Promise<Written<StoredCompaction>> {
    return { result: await this.inner.addCompaction(c.summary, c.fromMessageId, c.toMessageId, c.details) };
  }
}
