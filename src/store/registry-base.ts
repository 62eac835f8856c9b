/**
 * The session registry every backend of this package runs, as `StoreProvider` runs message writes: each public
 * method validates its input once, answers an id no row can have without asking the backend (`null` / `false`,
 * see isLookupKey), checks the store is open, calls one primitive and publishes what it changed. A backend
 * implements only the primitives (its SQL, or its maps), so a new one cannot forget a check or a publish.
 */
import type {
  NewSessionRecord,
  SessionInfo,
  SessionListOptions,
  SessionRegistry,
  SessionScanOptions,
  SessionUsage,
} from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { type OwnerGuard, UNGUARDED } from "./crypto/write-guard.js";
import type { ErasureCondition, ErasureCounts } from "./erasure.js";
import type { ChangeFeed } from "./feed/feed.js";
import { publishWhole } from "./feed/publish.js";
import { isLookupKey, lookupKeys } from "./keys.js";
import {
  checkListOptions,
  checkRecord,
  checkScanOptions,
  checkUsage,
  registryText,
} from "./registry-schema.js";
import type { Logged } from "./written.js";

/** The one text field a registry update sets (a rename, an end reason), or none: a touch. */
export type RegistryChange =
  | {
      field: "name" | "end_reason";
      value: string;
      /** A name's: what its key look-up found for the owner, which the write requires still (write-guard.ts). */
      guard?: OwnerGuard;
    }
  | undefined;

/** A name as its column stores it (sealed or in clear) and the guard its write carries (write-guard.ts). */
export interface StoredName {
  value: string;
  guard: OwnerGuard;
}

/** What a backend's erase did: the counts, and the cursor of the `erased` its transaction logged, if any. */
export interface RegistryErasure {
  counts: ErasureCounts;
  /** The change-log cursor of the `erased` row the erasure committed with itself; undefined: the feed records it. */
  logged: number | undefined;
}

/** What a backend's delete did: whether a row was registered, and the `clear` to publish (undefined: none). */

export interface RegistryDeletion {
  removed: boolean;
  /** Undefined when nothing was stored under the id; else the cursor of the `clear` the delete logged, if any. */
  cleared: Logged | undefined;
}

/** The base of this package's session registries (see the module comment). */
export abstract class StoreRegistry implements SessionRegistry {
  /**
   * `publisher`: the store whose feed a delete publishes to, read at each delete (stores make their feed after
   * their registry); omitted by the parts of a store that only read, count or adopt (nothing they write is
   * published).
   */
  constructor(private readonly publisher?: { readonly feed: ChangeFeed }) {}

  /** Throws `CLOSED` once the store is closed (a backend whose every statement refuses by then does nothing). */
  protected abstract assertOpen(): void;
  /**
   * Forgets what this process remembers of the session's owner once this store created, deleted or erased it (a
   * store that seals by owner overrides it), so a later read looks the owner up again instead of opening a session
   * created again under the id with the old owner's key.
   */
  protected ownerChanged(_id: string): void {}
  /** Inserts a row with zero counters; null when the id is already registered. */
  /**
   * Inserts the row (its name stored already); null when the id is registered, or when `guard` (what the name's key
   * look-up found for the owner) no longer holds.
   */
  protected abstract writeCreate(record: NewSessionRecord, guard?: OwnerGuard): Promise<SessionInfo | null>;
  /** The row of a lookup-able id, or null. */
  protected abstract readRow(id: string): Promise<SessionInfo | null>;
  /** A page of rows, newest activity first (validated paging). */
  protected abstract readPage(options: SessionListOptions): Promise<SessionInfo[]>;
  /** Every row (of `source` when given) in the store's order of ids, `pageSize` rows per read. */
  protected abstract readScan(pageSize: number, source: string | undefined): AsyncIterable<SessionInfo>;
  /** The number of rows. */
  protected abstract readCount(): Promise<number>;
  /** Applies `change`, bumps `updated_at` and the activity order; null when the id is not registered. */
  protected abstract writeChange(id: string, change: RegistryChange): Promise<SessionInfo | null>;
  /** Adds validated usage (`INVALID_ARGUMENT` for a refused total, nothing changed); null for an unknown id. */
  protected abstract writeUsage(id: string, usage: Required<SessionUsage>): Promise<SessionInfo | null>;
  /** Removes the row, the session's data and the blocks of `blockKeys` (lookup-able keys) in one write. */
  protected abstract writeDelete(id: string, blockKeys: string[]): Promise<RegistryDeletion>;
  /**
   * Erases the session in one transaction (see SessionRegistry.erase): the rows `writeDelete` removes, the entries
   * filed under `blockKeys`, the session's change-log rows, then logs `erased`; null when nothing was stored under
   * the id or the condition did not hold when checked in that transaction.
   */
  protected abstract writeErase(
    id: string,
    blockKeys: string[],
    condition: ErasureCondition,
  ): Promise<RegistryErasure | null>;
  /** Sets the pinned flag (not an activity: `updated_at` is kept); null when the id is not registered. */
  protected abstract writePin(id: string, pinned: boolean): Promise<SessionInfo | null>;

  /**
   * The value the name column of session `id` stores (`owner`: the one it is registered with; undefined: look it
   * up): the name as it is here; a store that seals by owner seals it for an owner with a key (the row codec's
   * "name" kind) and refuses (`DECRYPT_FAILED`) a name for an owner with a key it lacks.
   */
  protected async storedName(
    _id: string,
    _owner: string | null | undefined,
    name: string,
    _fresh: boolean,
  ): Promise<StoredName> {
    return { value: name, guard: UNGUARDED.guard };
  }

  /** The rows as read, with their names opened (a store that seals by owner overrides it). */
  protected async openNames(rows: SessionInfo[]): Promise<SessionInfo[]> {
    return rows;
  }

  private async opened(row: SessionInfo | null): Promise<SessionInfo | null> {
    return row === null ? null : ((await this.openNames([row]))[0] ?? null);
  }

  async create(input: NewSessionRecord): Promise<SessionInfo> {
    const record = checkRecord(input);
    this.assertOpen();
    let info: SessionInfo | null = null;
    // A name whose guard refused it (another process recorded the owner's first key since its look-up) is stored
    // again from a fresh look-up: sealed, or refused DECRYPT_FAILED; a second null is the id taken.
    for (let fresh = false; ; fresh = true) {
      const name = await this.storedName(record.id, record.owner, record.name, fresh);
      info = await this.writeCreate({ ...record, name: name.value }, name.guard);
      if (info || fresh || name.guard.ownerHash === null) break;
    }
    if (info) this.ownerChanged(record.id);
    if (!info) throw new SessionError("CONFLICT", `Session "${record.id}" is already registered`);
    return (await this.opened(info))!;
  }

  async get(id: string): Promise<SessionInfo | null> {
    if (!isLookupKey(id)) return null;
    this.assertOpen();
    return this.opened(await this.readRow(id));
  }

  async list(input?: SessionListOptions): Promise<SessionInfo[]> {
    const options = checkListOptions(input);
    this.assertOpen();
    return this.openNames(await this.readPage(options));
  }

  async *scan(input?: SessionScanOptions): AsyncGenerator<SessionInfo> {
    const { pageSize, source } = checkScanOptions(input);
    this.assertOpen();
    for await (const row of this.readScan(pageSize, source)) yield (await this.opened(row))!;
  }

  async count(): Promise<number> {
    this.assertOpen();
    return this.readCount();
  }

  async rename(id: string, name: string): Promise<SessionInfo | null> {
    registryText(name, "A session name", "name");
    return this.opened(await this.change(id, { field: "name", value: name }));
  }

  async touch(id: string): Promise<boolean> {
    return (await this.change(id, undefined)) !== null;
  }

  async addUsage(id: string, input: SessionUsage): Promise<SessionInfo | null> {
    const usage = checkUsage(input);
    if (!isLookupKey(id)) return null;
    this.assertOpen();
    return this.opened(await this.writeUsage(id, usage));
  }

  async markEnded(id: string, reason: string): Promise<SessionInfo | null> {
    registryText(reason, "An end reason", "reason");
    return this.opened(await this.change(id, { field: "end_reason", value: reason }));
  }

  /**
   * Removes the row, the session's messages, overlays and head and the given blocks; publishes the session's
   * `clear` when a head or a row was there.
   */
  async delete(id: string, options: { blockKeys?: readonly string[] } = {}): Promise<boolean> {
    if (!isLookupKey(id)) return false;
    this.assertOpen();
    const { removed, cleared } = await this.writeDelete(id, lookupKeys(options.blockKeys ?? []));
    this.ownerChanged(id);
    if (cleared && this.publisher) await publishWhole(this.publisher.feed, "clear", id, cleared.logged);
    return removed;
  }

  /** Erases the session (see SessionRegistry.erase) and publishes its `erased` event. */
  async erase(
    id: string,
    options: { blockKeys?: readonly string[]; condition?: ErasureCondition } = {},
  ): Promise<ErasureCounts | null> {
    if (!isLookupKey(id)) return null;
    this.assertOpen();
    const erased = await this.writeErase(id, lookupKeys(options.blockKeys ?? []), options.condition ?? {});
    if (!erased) return null;
    this.ownerChanged(id);
    if (this.publisher) await publishWhole(this.publisher.feed, "erased", id, erased.logged);
    return erased.counts;
  }

  /** Pins or unpins a registered session; null when the id is not registered. */
  async pin(id: string, pinned: boolean): Promise<SessionInfo | null> {
    if (typeof pinned !== "boolean")
      throw new SessionError("INVALID_ARGUMENT", "pinned must be true or false", {
        issues: [{ path: "pinned", rule: "type" }],
      });
    if (!isLookupKey(id)) return null;
    this.assertOpen();
    return this.opened(await this.writePin(id, pinned));
  }

  private async change(id: string, change: RegistryChange): Promise<SessionInfo | null> {
    // An id no row can have is not looked up (better-sqlite3 would match its U+FFFD form).
    if (!isLookupKey(id)) return null;
    this.assertOpen();
    if (change?.field !== "name") return this.writeChange(id, change);
    // A rename's name is written under its guard (see create): refused, it is stored again from a fresh look-up.
    for (let fresh = false; ; fresh = true) {
      const name = await this.storedName(id, undefined, change.value, fresh);
      // Answered as written: a touch (every append's) opens no name, its callers that answer the row do.
      const row = await this.writeChange(id, { ...change, value: name.value, guard: name.guard });
      if (row || fresh || name.guard.ownerHash === null) return row;
    }
  }
}
