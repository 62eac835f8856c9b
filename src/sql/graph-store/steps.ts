/**
 * The items of a LangGraph store (`agent-session/langgraph`'s AgentSessionStore, docs/LANGGRAPH.md "Store"), written
 * once for both SQL engines: the steps over the statement table (statements.ts), run by the engine's runner.
 * An item is its owner's data: every row names its owner, every read but the store-wide ones is kept to one owner,
 * and an encrypted owner's value is sealed under its key (owner-data.ts `ITEM`, bound to the namespace and
 * key), so this module, not SQL, opens it; filters and a text query run after the rows are opened (langgraph/store/).
 */
import type { GraphItem, GraphItemDraft, GraphScope } from "../../contract/graph-items.js";
import { SessionError } from "../../errors.js";
import type { ContentKeys } from "../../store/crypto/content-keys.js";
import { decode, encode, isSealedValue } from "../../store/crypto/row-codec.js";
import { GuardRefused, type OwnerWrite, retryGuarded } from "../../store/crypto/write-guard.js";
import { countOf, type Program, type Row, type Statement, type Step } from "../program.js";
import type { RoomEngine } from "../room-engine.js";
import { ITEM } from "./owner-data.js";

/** One engine's statements of graph items (table `agent_graph_items`). */
export interface GraphItemStatements {
  /** The owner's write key and guard (crypto/write-guard.ts), looked up in the write's transaction: rows `write`. */
  writeKey(owner: string, where: string, fresh: boolean): Step;
  /** The item inserted or replaced (its `created_at` kept) under its guard: a row `n` when written, none when refused. */
  upsert(item: GraphItemDraft, stored: string, now: number, guard: OwnerWrite): Statement;
  /** The item deleted. */
  remove(owner: string, namespace: string, key: string): Statement;
  /** The item unless expired at `now`: `owner, namespace, key, value, fields, created_at, updated_at, expires_at`. */
  get(owner: string, namespace: string, key: string, now: number): Statement;
  /** The item's expiry moved to `now` + its time to live (an item without one is left). */
  refresh(owner: string, namespace: string, key: string, now: number): Statement;
  /** Up to `limit` unexpired items of the scope after `after` (namespace, key), in that order; the columns of get. */
  page(scope: GraphScope, after: readonly [string, string] | null, now: number, limit: number): Statement;
  /** Up to `limit` distinct namespaces (`namespace`) of unexpired items of the scope after `after`, in order. */
  namespaces(scope: GraphScope, after: string | null, now: number, limit: number): Statement;
  /** Up to `limit` owners (`owner`) holding items expired at `now`. */
  expiredOwners(now: number, limit: number): Statement;
  /** The owner's items expired at `now` deleted: a row each. */
  deleteExpired(owner: string, now: number): Statement;
  /** Every item of the owner deleted (its erasure): a row each. */
  eraseOwner(owner: string): Statement;
  /** The number of stored items (`n`), expired ones included. */
  count(): Statement;
  /** Up to `limit` owners (`owner`) holding items, after `after`, in order (an export's walk). */
  owners(after: string | null, limit: number): Statement;
  /** The item as exported (its times kept) unless one is stored under its key, under its guard: a row `n` when written. */
  insert(item: GraphItem, stored: string, guard: OwnerWrite): Statement;
}

// The rows a page or namespace list reads at once (each statement is bounded by it or by the caller's limit).
const SWEEP_OWNERS = 100;
// Items and owners per read of an export.
const EXPORT_PAGE = 256;
// Below every expiry: a read "at" it finds an item whether it expired or not.
const EVER = Number.MIN_SAFE_INTEGER;

/** The graph items of an SQL store: each write one transaction; reads bounded by their limit. */
export class SqlGraphItems {
  constructor(
    private readonly engine: Pick<RoomEngine, "run" | "withKeys">,
    private readonly s: GraphItemStatements,
  ) {}

  /**
   * Writes every put (value not null) and delete of `items`, all or none, each owner's values sealed under its key
   * looked up in the transaction (`DECRYPT_FAILED` for an encrypted owner whose key the store lacks).
   */
  async write(
    puts: readonly GraphItemDraft[],
    deletes: readonly GraphItemDraft[],
    now: number,
  ): Promise<void> {
    if (puts.length + deletes.length === 0) return;
    await retryGuarded((fresh) => this.engine.run(() => writeAll(this.s, puts, deletes, now, fresh), true));
  }

  /** The item, opened, or null (none, or expired at `now`); `refresh` moves its expiry first. */
  async get(
    owner: string,
    namespace: string,
    key: string,
    now: number,
    refresh: boolean,
  ): Promise<GraphItem | null> {
    const rows = await this.engine.run(() => readOne(this.s, owner, namespace, key, now, refresh), refresh);
    return (await this.open(rows))[0] ?? null;
  }

  /** Up to `limit` unexpired items of the scope after `after`, opened, in (namespace, key) order. */
  async page(
    scope: GraphScope,
    after: readonly [string, string] | null,
    now: number,
    limit: number,
  ): Promise<GraphItem[]> {
    const rows = await this.engine.run(() => rowsOf(this.s.page(scope, after, now, limit)), false);
    return this.open(rows);
  }

  /** Moves the expiry of the items given (each refreshed as a get would). */
  async refresh(items: readonly GraphItem[], now: number): Promise<void> {
    const refreshed = items.filter((item) => item.expiresAt !== null);
    if (refreshed.length === 0) return;
    await this.engine.run(() => refreshAll(this.s, refreshed, now), true);
  }

  /** Up to `limit` distinct namespaces of the scope's unexpired items after `after`, in byte order. */
  async namespaces(scope: GraphScope, after: string | null, now: number, limit: number): Promise<string[]> {
    const rows = await this.engine.run(() => rowsOf(this.s.namespaces(scope, after, now, limit)), false);
    return rows.map((row) => String(row.namespace));
  }

  /** Deletes every item expired at `now` (owner by owner, a bounded read of owners at a time); how many went. */
  sweep(now: number): Promise<number> {
    return this.engine.run(() => sweepAll(this.s, now), false);
  }

  /** Deletes every item of `owner`; how many went. */
  async eraseOwner(owner: string): Promise<number> {
    return (await this.engine.run(() => rowsOf(this.s.eraseOwner(owner)), false)).length;
  }

  /** Every item of `owner` (null: every owner's, owner by owner) unexpired at `now`, opened, a page at a time. */
  async *exportItems(owner: string | null, now: number): AsyncGenerator<GraphItem> {
    if (owner !== null) {
      yield* this.ownerItems(owner, now);
      return;
    }
    for (let after: string | null = null; ; ) {
      const rows = await this.engine.run(() => rowsOf(this.s.owners(after, EXPORT_PAGE)), false);
      for (const row of rows) yield* this.ownerItems(String(row.owner), now);
      if (rows.length < EXPORT_PAGE) return;
      after = String(rows.at(-1)!.owner);
    }
  }

  private async *ownerItems(owner: string, now: number): AsyncGenerator<GraphItem> {
    for (let after: readonly [string, string] | null = null; ; ) {
      const page = await this.page({ owner, prefix: "" }, after, now, EXPORT_PAGE);
      yield* page;
      if (page.length < EXPORT_PAGE) return;
      const last = page.at(-1)!;
      after = [last.namespace, last.key];
    }
  }

  /** Stores exported items (their times kept) unless stored, in one transaction, sealed as a write seals; how many were new. */
  async importItems(items: readonly GraphItem[]): Promise<number> {
    if (items.length === 0) return 0;
    return retryGuarded((fresh) => this.engine.run(() => insertAll(this.s, items, fresh), true));
  }

  /** The number of stored items, expired ones included. */
  async count(): Promise<number> {
    return countOf(await this.engine.run(() => rowsOf(this.s.count()), false));
  }

  // Opens the rows' values with their owners' keys (sealed ones only: a store of clear items never asks).
  private async open(rows: readonly Row[]): Promise<GraphItem[]> {
    const items = rows.map(itemOf);
    if (!items.some((item) => isSealedValue(ITEM, item.value))) return items;
    return this.engine.withKeys((keys) => items.map((item) => ({ ...item, value: opened(keys, item) })));
  }
}

/** The stored form of an item's value: sealed under `key`, or its JSON (key null). */
export function storedValue(
  key: Uint8Array | null,
  item: Pick<GraphItemDraft, "namespace" | "key" | "value">,
): string {
  return encode(ITEM, key, { namespace: item.namespace, key: item.key }, item.value);
}

function opened(keys: ContentKeys | undefined, item: GraphItem): string {
  return decode(ITEM, keys, item.owner, { namespace: item.namespace, key: item.key }, item.value);
}

function itemOf(row: Row): GraphItem {
  const expires = row.expires_at;
  return {
    owner: String(row.owner),
    namespace: String(row.namespace),
    key: String(row.key),
    value: String(row.value),
    fields: row.fields === null || row.fields === undefined ? null : String(row.fields),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: expires === null || expires === undefined ? null : Number(expires),
    ttlMs: row.ttl_ms === null || row.ttl_ms === undefined ? null : Number(row.ttl_ms),
  };
}

function* rowsOf(step: Statement): Program<Row[]> {
  return yield step;
}

/** The owner's key and guard for this program's writes, looked up once per owner (`writes` remembers them). */
function* writeOf(
  s: GraphItemStatements,
  writes: Map<string, OwnerWrite>,
  owner: string,
  fresh: boolean,
): Program<OwnerWrite> {
  const known = writes.get(owner);
  if (known) return known;
  const [row] = yield s.writeKey(owner, `the store items of owner "${owner}"`, fresh);
  const write = row?.write as OwnerWrite | undefined;
  if (!write) throw new SessionError("STORAGE", "The owner's key look-up answered nothing");
  writes.set(owner, write);
  return write;
}

function* writeAll(
  s: GraphItemStatements,
  puts: readonly GraphItemDraft[],
  deletes: readonly GraphItemDraft[],
  now: number,
  fresh: boolean,
): Program<void> {
  for (const item of deletes) yield s.remove(item.owner, item.namespace, item.key);
  const writes = new Map<string, OwnerWrite>();
  for (const item of puts) {
    const write = yield* writeOf(s, writes, item.owner, fresh);
    const rows = yield s.upsert(item, storedValue(write.key, item), now, write);
    if (rows.length === 0) throw new GuardRefused(`item "${item.key}"`);
  }
}

function* insertAll(s: GraphItemStatements, items: readonly GraphItem[], fresh: boolean): Program<number> {
  const writes = new Map<string, OwnerWrite>();
  let inserted = 0;
  for (const item of items) {
    if ((yield s.get(item.owner, item.namespace, item.key, EVER)).length > 0) continue;
    const write = yield* writeOf(s, writes, item.owner, fresh);
    const rows = yield s.insert(item, storedValue(write.key, item), write);
    if (rows.length === 0) throw new GuardRefused(`item "${item.key}"`);
    inserted++;
  }
  return inserted;
}

function* readOne(
  s: GraphItemStatements,
  owner: string,
  namespace: string,
  key: string,
  now: number,
  refresh: boolean,
): Program<Row[]> {
  if (refresh) yield s.refresh(owner, namespace, key, now);
  return yield s.get(owner, namespace, key, now);
}

function* refreshAll(s: GraphItemStatements, items: readonly GraphItem[], now: number): Program<void> {
  for (const item of items) yield s.refresh(item.owner, item.namespace, item.key, now);
}

function* sweepAll(s: GraphItemStatements, now: number): Program<number> {
  let gone = 0;
  for (;;) {
    const owners = yield s.expiredOwners(now, SWEEP_OWNERS);
    for (const row of owners) gone += (yield s.deleteExpired(String(row.owner), now)).length;
    if (owners.length < SWEEP_OWNERS) return gone;
  }
}
