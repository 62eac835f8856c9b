import type {
  NewSessionRecord,
  SessionInfo,
  SessionListOptions,
  SessionUsage,
} from "../contract/registry.js";
import type { StepGuard } from "../contract/step.js";
import { SessionError } from "../errors.js";
import { compareUtf8 } from "../runtime/bytes.js";
import { type ErasureCondition, meetsCondition, noCounts } from "../store/erasure.js";
import { ownedBy } from "../store/owner.js";
import {
  type RegistryChange,
  type RegistryDeletion,
  type RegistryErasure,
  StoreRegistry,
} from "../store/registry-base.js";
import { assertUsageFits } from "../store/usage-totals.js";
import type { MemoryBackend as MemoryStore } from "./data.js";

interface Row {
  info: SessionInfo;
  /** Write order: breaks ties between rows written within the same millisecond. */
  activity: number;
}

/** The session registry of a {@link MemoryStore}: rows held in process memory. */
export class MemorySessionRegistry extends StoreRegistry {
  private readonly rows = new Map<string, Row>();
  /** Each owner's registered sessions: an owner's search reads these, not every row. */
  private readonly owned = new Map<string, Set<string>>();
  private activity = 0;

  constructor(private readonly store: MemoryStore) {
    super(store);
  }

  protected assertOpen(): void {
    this.store.assertOpen();
  }

  protected async writeCreate(record: NewSessionRecord): Promise<SessionInfo | null> {
    if (this.rows.has(record.id)) return null;
    const now = new Date().toISOString();
    const info: SessionInfo = {
      id: record.id,
      name: record.name,
      parent_session_id: record.parentSessionId ?? null,
      model: record.model ?? null,
      source: record.source ?? null,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      estimated_cost: 0,
      end_reason: null,
      created_at: now,
      updated_at: now,
      ...(record.owner ? { owner: record.owner } : {}),
    };
    this.put(record.id, { info, activity: ++this.activity });
    return { ...info };
  }

  /** @internal writes a row exactly as given (transfer import); false when the id is already registered. */
  restore(info: SessionInfo): boolean {
    this.store.assertOpen();
    if (this.rows.has(info.id)) return false;
    // `pinned` is true or absent on a row; an import may carry `false`.
    const { pinned, ...rest } = info as Omit<SessionInfo, "pinned"> & { pinned?: boolean };
    this.put(info.id, { info: pinned === true ? { ...rest, pinned } : rest, activity: ++this.activity });
    return true;
  }

  protected async readRow(id: string): Promise<SessionInfo | null> {
    const row = this.rows.get(id);
    return row ? { ...row.info } : null;
  }

  protected async readPage(options: SessionListOptions): Promise<SessionInfo[]> {
    const { owner } = options;
    const rows =
      owner === undefined
        ? [...this.rows.values()]
        : [...this.ownedIds(owner)].flatMap((id) => this.rows.get(id) ?? []);
    const sorted = rows.sort(byRecent);
    const offset = options.offset ?? 0;
    const end = options.limit === undefined ? undefined : offset + options.limit;
    return sorted.slice(offset, end).map((row) => ({ ...row.info }));
  }

  protected async *readScan(_pageSize: number, source: string | undefined): AsyncGenerator<SessionInfo> {
    // The ids as they are now (of the source asked for), sorted once (the rows are in memory already; there is no
    // page to read, so the size is only checked); each is looked up again when its turn comes, so a session
    // deleted meanwhile is left out (or registered again under another source) and a touched one yields its
    // current row.
    const wanted = (row: Row | undefined): row is Row =>
      row !== undefined && (source === undefined || row.info.source === source);
    const ids = [...this.rows].filter(([, row]) => wanted(row)).map(([id]) => id);
    for (const id of ids.sort(compareUtf8)) {
      this.store.assertOpen();
      const row = this.rows.get(id);
      if (wanted(row)) yield { ...row.info };
    }
  }

  /** Whether the row is among its owner's `n` newest, in list({ owner })'s order (only the owner's rows are read). */
  private amongNewest(info: SessionInfo, n: number | undefined): boolean {
    if (!n || info.owner === undefined || info.owner === null) return false;
    const owned = [...this.ownedIds(info.owner)].flatMap((id) => this.rows.get(id) ?? []);
    return owned
      .sort(byRecent)
      .slice(0, n)
      .some((row) => row.info.id === info.id);
  }

  /** @internal the ids of the sessions registered with `owner` (a search's owner scope): no other row is read. */
  ownedIds(owner: string): ReadonlySet<string> {
    return this.owned.get(owner) ?? new Set();
  }

  private put(id: string, row: Row): void {
    this.rows.set(id, row);
    const { owner } = row.info;
    if (owner === undefined || owner === null) return;
    const ids = this.owned.get(owner) ?? new Set<string>();
    ids.add(id);
    this.owned.set(owner, ids);
  }

  private remove(id: string): boolean {
    const owner = this.rows.get(id)?.info.owner;
    if (owner !== undefined && owner !== null) {
      const ids = this.owned.get(owner);
      ids?.delete(id);
      if (ids?.size === 0) this.owned.delete(owner);
    }
    return this.rows.delete(id);
  }

  protected async readCount(): Promise<number> {
    return this.rows.size;
  }

  /** Applies a change and bumps the row's activity; null when the id is not registered. */
  private update(id: string, change: (info: SessionInfo) => void): SessionInfo | null {
    this.store.assertOpen();
    const row = this.rows.get(id);
    if (!row) return null;
    change(row.info);
    row.info.updated_at = new Date().toISOString();
    row.activity = ++this.activity;
    return { ...row.info };
  }

  protected async writeChange(id: string, change: RegistryChange): Promise<SessionInfo | null> {
    return this.update(id, (info) => {
      if (change) info[change.field] = change.value;
    });
  }

  protected async writeUsage(id: string, usage: Required<SessionUsage>): Promise<SessionInfo | null> {
    return this.update(id, (info) => add(id, info, usage));
  }

  /**
   * @internal an agent step's registry part (memory/step.ts), synchronous so the step stays atomic: the row must
   * exist, of `guard.source` and `guard.owner` when given (`NOT_FOUND`), and takes `usage` (checked) or is only
   * touched; a refused total changes nothing.
   */
  stepUsage(id: string, guard: StepGuard, usage: SessionUsage | undefined): void {
    const row = this.rows.get(id);
    const { source, owner } = guard;
    if (
      !row ||
      (source !== undefined && row.info.source !== source) ||
      (owner !== undefined && !ownedBy(row.info, owner))
    ) {
      throw new SessionError("NOT_FOUND", `Session not found: ${id}`);
    }
    this.update(id, (info) => usage && add(id, info, usage));
  }

  /**
   * Removes the row, the session's messages and overlays, the given blocks (but those recorded for another) and
   * every block and entry recorded for the session; a `clear` when any was there.
   */
  protected async writeDelete(id: string, blockKeys: string[]): Promise<RegistryDeletion> {
    const held = this.store.sessionData(id, false) !== undefined;
    // Messages, overlays and their search rows live together in the store's session data.
    this.store.dropSession(id);
    this.store.blocks.dropKeys(blockKeys, id);
    this.store.entries.dropRecorded({ sessionId: id });
    this.store.facts.forgetSession(id);
    const removed = this.remove(id);
    return { removed, cleared: held || removed ? {} : undefined };
  }

  // Synchronous from the first read to the last drop: no other write interleaves, as in one transaction.
  protected async writeErase(
    id: string,
    keys: string[],
    condition: ErasureCondition,
  ): Promise<RegistryErasure | null> {
    const row = this.rows.get(id);
    const data = this.store.sessionData(id, false);
    if (!meetsCondition(row?.info, condition)) return null;
    if (row && this.amongNewest(row.info, condition.keepNewest)) return null;
    const counts = noCounts();
    counts.sessions = row ? 1 : 0;
    counts.messages = data?.rows.size ?? 0;
    counts.compactions = data?.compactions.length ?? 0;
    const payloads = this.store.attachments.size;
    this.store.dropSession(id);
    counts.attachments = payloads - this.store.attachments.size;
    counts.vectors = this.store.forgetVectors(id);
    counts.blocks = this.store.blocks.dropKeys(keys, id);
    for (const key of keys) counts.entries += this.store.entries.dropLabel(key, id);
    counts.entries += this.store.entries.dropRecorded({ sessionId: id });
    counts.facts = this.store.facts.forgetSession(id);
    this.remove(id);
    if (Object.values(counts).every((n) => n === 0) && !data) return null; // nothing was there
    return { counts, logged: undefined };
  }

  protected async writePin(id: string, pinned: boolean): Promise<SessionInfo | null> {
    const row = this.rows.get(id);
    if (!row) return null;
    if (pinned) row.info.pinned = true;
    else delete row.info.pinned;
    return { ...row.info };
  }
}

/** The registry's order: last activity first, ties by write order. */
function byRecent(a: Row, b: Row): number {
  return (
    (a.info.updated_at < b.info.updated_at ? 1 : a.info.updated_at > b.info.updated_at ? -1 : 0) ||
    b.activity - a.activity
  );
}

/** Adds checked usage to a row's counters; before any counter changes, a refused addition throws. */
function add(id: string, info: SessionInfo, usage: SessionUsage): void {
  assertUsageFits(id, info, usage);
  info.input_tokens += usage.inputTokens;
  info.output_tokens += usage.outputTokens;
  info.cache_read_tokens += usage.cacheReadTokens ?? 0;
  info.cache_write_tokens += usage.cacheWriteTokens ?? 0;
  info.estimated_cost += usage.cost;
}
