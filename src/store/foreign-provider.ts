/**
 * A `SessionProvider` this package did not make (the user's own, or one of ours handed to `Session.create` directly),
 * adapted once to the write pipeline: the Session's policy prepares each message here, as a store's provider
 * prepares it, and the `write*` methods hand the prepared message to the user's object. The user's provider may
 * leave out what a result reports; the stored form is then the JSON just prepared, or what a read returns.
 */
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import type {
  AppendOptions,
  AppendResult,
  ImportMessageOptions,
  SessionMessage,
  SessionProvider,
  StoredCompaction,
  UpdateResult,
  UpsertOptions,
  UpsertResult,
} from "../types.js";
import { ChangeFeed } from "./feed/feed.js";
import { StoreProvider } from "./provider.js";
import type { SessionBinding } from "./types.js";
import { type PreparedWrite, prepareServerWrite, type WritePolicy, withStored } from "./write-policy.js";

// Nobody can subscribe to it: a foreign provider's writes are the user's to publish.
const UNHEARD = new ChangeFeed();

/** The result a foreign provider reported, with the stored form (parsed from `json` on first access when it left it out). */
function stored<T extends object>(result: T & { message?: SessionMessage | undefined }, json: string) {
  // `in`, not a read: the stored form is parsed lazily, only when the caller looks at it.
  if ("message" in result) return result as T & { message: SessionMessage };
  return withStored({ ...result }, json);
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

  protected async writeAppend(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    options: AppendOptions | undefined,
  ): Promise<AppendResult> {
    const result: AppendResult = (await this.inner.appendMessage(message, parentId, options)) ?? {
      inserted: true,
    };
    if ("message" in result || result.inserted) return stored(result, json);
    // A provider that does not report the stored form: the first content is what a read returns.
    const existing = await this.inner.getMessage(message.id);
    return { inserted: false, message: existing ?? parseMessage(json) ?? message };
  }

  /** Without `upsertMessage` on the user's provider: reads, then updates or appends (the one upsert fallback). */
  protected async writeUpsert(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    _keep: unknown,
    options: UpsertOptions | undefined,
  ): Promise<UpsertResult> {
    const { inner } = this;
    if (inner.upsertMessage) return stored(await inner.upsertMessage(message, parentId, options), json);
    if ((await inner.getMessage(message.id)) !== null) {
      return withStored({ inserted: false, updated: await this.replace(message) }, json);
    }
    const source = options?.source ? { source: options.source } : undefined;
    const appended = await inner.appendMessage(message, parentId, source);
    if (appended?.inserted !== false) return withStored({ inserted: true, updated: false }, json);
    // Inserted by another writer between the read and the append: replace it, as an upsert promises.
    return withStored({ inserted: false, updated: await this.replace(message) }, json);
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
    return stored(await this.importer()(message, options), json);
  }

  protected async writeImport(
    { message, json }: PreparedWrite,
    parentId: string | null | undefined,
    createdAt: string,
  ): Promise<AppendResult> {
    const parent = parentId === undefined ? {} : { parentId };
    return stored(await this.importer()(message, { ...parent, createdAt }), json);
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

  protected async writeUpdate({ message, json }: PreparedWrite): Promise<UpdateResult> {
    return stored((await this.inner.updateMessage(message)) ?? { updated: true }, json);
  }

  protected async writeDelete(ids: string[]): Promise<undefined> {
    await this.inner.deleteMessages(ids);
  }

  protected async writeClear(): Promise<undefined> {
    await this.inner.clearMessages();
  }

  protected writeCompaction(c: StoredCompaction): Promise<StoredCompaction> {
    return this.inner.addCompaction(c.summary, c.fromMessageId, c.toMessageId, c.details);
  }
}
