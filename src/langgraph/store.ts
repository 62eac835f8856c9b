/**
 * `AgentSessionStore`: LangGraph's `BaseStore` over an agent-session store's graph items (sql/graph-store/), on
 * SQLite and Postgres (PGlite and Citus included). Each item is its owner's (the namespace's first label, or the
 * app's `owner` function), so `eraseOwner` and `purge` remove it, an encrypted owner's value is sealed, and a search
 * or listing stays within the owner its prefix names. docs/LANGGRAPH.md "Store" says what differs from InMemoryStore.
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import type { GraphItem, GraphItemDraft, GraphScope } from "../contract/graph-items.js";
import { SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { rule } from "../schema/to-session-error.js";
import type { SqlGraphItems } from "../sql/graph-store/steps.js";
import { passes, queryTerms, scoreItem } from "./store/match.js";
import {
  type AgentSessionStoreOptions,
  pageSchema,
  putSchema,
  type StoreSettings,
  storeSettings,
} from "./store/options.js";

export type { AgentSessionStoreOptions } from "./store/options.js";

/** A store that keeps graph items: a SqliteStore or a PostgresStore. */
export interface GraphItemStore {
  readonly graphItems: SqlGraphItems;
}

/** A put with a time to live in minutes (null: none, undefined: the store's default). */
export type TtlPutOperation = PutOperation & { ttl?: number | null | undefined };
/** A get or search that says whether it refreshes the time to live of what it reads. */
export type RefreshingOperation = (GetOperation | SearchOperation) & { refreshTtl?: boolean | undefined };

// A store with graph items (a SqliteStore or a PostgresStore).
const storeSchema = z.custom<GraphItemStore>(
  (store) => typeof (store as Partial<GraphItemStore> | null)?.graphItems?.page === "function",
  rule("AgentSessionStore needs a SqliteStore or a PostgresStore"),
);
// What the owner function answers: an owner id, or undefined for none.
const ownerAnswer = z
  .string(rule("The owner function must answer a string or undefined"))
  .min(1, rule("The owner function answered an empty owner", "range"))
  .optional();

// Rows a scanning search reads per statement.
const PAGE = 256;
const MINUTE = 60_000;

/** LangGraph's `BaseStore` over an agent-session store, its items each an owner's. */
export class AgentSessionStore extends BaseStore {
  private readonly items: SqlGraphItems;
  private readonly settings: StoreSettings;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(store: GraphItemStore, options?: AgentSessionStoreOptions) {
    super();
    this.items = parseInput(storeSchema, store).graphItems;
    this.settings = storeSettings(options);
  }

  /** Runs the operations: reads in order, then every put and delete (the last of each item wins) in one transaction. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const now = Date.now();
    const results: unknown[] = [];
    const writes = new Map<string, TtlPutOperation>();
    for (const op of operations) {
      if ("namespace" in op) validateNamespace(op.namespace, { allowReservedRoot: true });
      if ("value" in op) {
        writes.set(JSON.stringify([op.namespace, op.key]), op as TtlPutOperation);
        results.push(undefined);
      } else if ("key" in op) results.push(await this.getOne(op, now));
      else if ("namespacePrefix" in op) results.push(await this.searchOne(op, now));
      else results.push(await this.listOne(op as ListNamespacesOperation, now));
    }
    await this.write([...writes.values()], now);
    return results as OperationResults<Op>;
  }

  /** `put`, with an optional time to live in minutes (`{ ttl }`; null: none, default: the store's `defaultTtl`). */
  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: { ttl?: number | null },
  ): Promise<void> {
    validateNamespace(namespace);
    const op: TtlPutOperation = { namespace, key, value, ...(index !== undefined ? { index } : {}) };
    if (options?.ttl !== undefined) op.ttl = options.ttl;
    await this.batch([op]);
  }

  /** Deletes every item expired now; how many went (what the periodic sweep of {@link start} runs). */
  sweepExpired(): Promise<number> {
    return this.items.sweep(Date.now());
  }

  /** Starts the periodic TTL sweep when `ttl.sweepIntervalMinutes` is set. */
  override start(): void {
    const every = this.settings.ttl.sweepIntervalMinutes;
    if (every === undefined || this.timer) return;
    this.timer = setInterval(() => {
      // A failed sweep is retried at the next interval; it is not an error of any caller's operation.
      this.sweepExpired().catch(() => undefined);
    }, every * MINUTE);
    this.timer.unref?.();
  }

  /** Stops the periodic TTL sweep. */
  override stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  // The owner an item's namespace (or a read's prefix) names.
  private ownerOf(namespace: readonly string[]): string | undefined {
    return parseInput(ownerAnswer, this.settings.owner ? this.settings.owner(namespace) : namespace[0]);
  }

  private itemOwner(namespace: readonly string[]): string {
    const named = z.string(rule(`Namespace ${JSON.stringify(namespace)} names no owner`));
    return parseInput(named, this.ownerOf(namespace));
  }

  private scopeOf(prefix: readonly string[]): GraphScope {
    const owner = prefix.length > 0 ? this.ownerOf(prefix) : undefined;
    if (!this.settings.crossOwnerReads) {
      const text = `Namespace prefix ${JSON.stringify(prefix)} names no owner (open the store with crossOwnerReads to read every owner's)`;
      parseInput(z.string(rule(text)), owner);
    }
    return { owner: owner ?? null, prefix: prefix.join(".") };
  }

  private async write(ops: readonly TtlPutOperation[], now: number): Promise<void> {
    const puts: GraphItemDraft[] = [];
    const deletes: GraphItemDraft[] = [];
    for (const op of ops) {
      const { key, value, ttl } = parseInput(putSchema, { key: op.key, value: op.value, ttl: op.ttl });
      const minutes = ttl === undefined ? this.settings.ttl.defaultTtl : ttl;
      const draft: GraphItemDraft = {
        owner: this.itemOwner(op.namespace),
        namespace: op.namespace.join("."),
        key,
        value: value === null ? "" : JSON.stringify(value),
        fields: op.index === false ? "[]" : Array.isArray(op.index) ? JSON.stringify(op.index) : null,
        ttlMs: minutes === undefined || minutes === null ? null : Math.round(minutes * MINUTE),
      };
      (value === null ? deletes : puts).push(draft);
    }
    await this.items.write(puts, deletes, now);
  }

  private async getOne(op: RefreshingOperation & GetOperation, now: number): Promise<Item | null> {
    const owner = this.itemOwner(op.namespace);
    const refresh = op.refreshTtl ?? this.settings.ttl.refreshOnRead;
    const found = await this.items.get(owner, op.namespace.join("."), String(op.key), now, refresh);
    return found && itemOf(found);
  }

  private async searchOne(op: RefreshingOperation & SearchOperation, now: number): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const { limit, offset } = parseInput(pageSchema, { limit: op.limit ?? 10, offset: op.offset ?? 0 });
    const scope = this.scopeOf(op.namespacePrefix);
    const terms = queryTerms(op.query);
    const filter = op.filter && Object.keys(op.filter).length > 0 ? op.filter : undefined;
    let found: { item: GraphItem; value: Record<string, unknown>; score: number | undefined }[];
    if (!filter && !terms) {
      this.withinScan(offset + limit);
      const page = await this.items.page(scope, null, now, offset + limit);
      found = page.slice(offset).map((item) => ({ item, value: parsed(item), score: undefined }));
    } else {
      // Filters and the query run on opened values (a sealed owner's too), over a bounded scan in key order.
      found = [];
      let after: [string, string] | null = null;
      for (let read = 0; ; ) {
        const page: GraphItem[] = await this.items.page(scope, after, now, PAGE);
        read += page.length;
        for (const item of page) {
          const value = parsed(item);
          if (!passes(value, filter)) continue;
          const score = terms ? scoreItem(terms, value, item.fields) : undefined;
          if (score !== 0) found.push({ item, value, score });
        }
        if (page.length < PAGE || (!terms && found.length >= offset + limit)) break;
        this.withinScan(read + 1);
        const last = page[page.length - 1] as GraphItem;
        after = [last.namespace, last.key];
      }
      if (terms) found.sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
      found = found.slice(offset, offset + limit);
    }
    const refresh = op.refreshTtl ?? this.settings.ttl.refreshOnRead;
    if (refresh)
      await this.items.refresh(
        found.map((f) => f.item),
        now,
      );
    // `score` is there, undefined without a query, as InMemoryStore answers it.
    return found.map(({ item, value, score }) => ({ ...itemOf(item, value), score }) as SearchItem);
  }

  private async listOne(op: ListNamespacesOperation, now: number): Promise<string[][]> {
    const { limit, offset } = parseInput(pageSchema, { limit: op.limit ?? 100, offset: op.offset ?? 0 });
    const conditions = op.matchConditions ?? [];
    const prefix = conditions.find((c) => c.matchType === "prefix")?.path ?? [];
    const literal = prefix.slice(0, prefix.includes("*") ? prefix.indexOf("*") : prefix.length);
    const scope = this.scopeOf(literal);
    const seen = new Set<string>();
    let after: string | null = null;
    for (let read = 0; ; ) {
      const page: string[] = await this.items.namespaces(scope, after, now, PAGE);
      read += page.length;
      for (const joined of page) {
        const labels = joined.split(".");
        if (!conditions.every((c) => matches(c, labels))) continue;
        seen.add((op.maxDepth !== undefined ? labels.slice(0, op.maxDepth) : labels).join("."));
      }
      if (page.length < PAGE) break;
      this.withinScan(read + 1);
      after = page[page.length - 1] as string;
    }
    return [...seen]
      .sort()
      .slice(offset, offset + limit)
      .map((joined) => joined.split("."));
  }

  private withinScan(rows: number): void {
    if (rows > this.settings.maxScan) {
      throw new SessionError(
        "TOO_LARGE",
        `The read would go past ${this.settings.maxScan} items (maxScan): narrow the namespace prefix or raise maxScan`,
      );
    }
  }
}

function matches(condition: MatchCondition, labels: readonly string[]): boolean {
  const { path } = condition;
  if (path.length > labels.length) return false;
  const start = condition.matchType === "prefix" ? 0 : labels.length - path.length;
  return path.every((label, i) => label === "*" || labels[start + i] === label);
}

function parsed(item: GraphItem): Record<string, unknown> {
  return JSON.parse(item.value) as Record<string, unknown>;
}

function itemOf(item: GraphItem, value: Record<string, unknown> = parsed(item)): Item {
  return {
    value,
    key: item.key,
    namespace: item.namespace.split("."),
    createdAt: new Date(item.createdAt),
    updatedAt: new Date(item.updatedAt),
  };
}
