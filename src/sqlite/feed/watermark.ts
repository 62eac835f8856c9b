import type { ChangeEvent } from "../../contract/feed.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import type { Interest } from "../../store/feed/remote.js";

/** New message rows looked at per poll for store-wide subscribers; more and one store-wide reset is sent instead. */
const NEW_ROWS = 1_000;
/** Session ids per `IN (…)` lookup (far below SQLite's bound-parameter limit). */
const CHUNK = 500;

// What a write to a session changes in its head row (the leaf, the count, the write time) or, for a compaction,
// the newest overlay (one indexed lookup per session).
const SIGNATURE = `SELECT h.session_id AS id, h.num AS num, h.leaf_seq AS leaf, h.message_count AS n,
  h.updated_at AS at, (SELECT max(c.seq) FROM agent_compactions c WHERE c.session_num = h.num) AS c
  FROM agent_session_heads h WHERE h.session_id IN`;

interface SignatureRow {
  id: string;
  num: number;
  leaf: number | null;
  n: number;
  at: string;
  c: number | null;
}

const GONE = "gone";

/** The data version of the connection, or undefined when this SQLite cannot tell (e.g. a `sql`-tag database). */
export function dataVersion(driver: SqlDriver): number | undefined {
  try {
    const row = driver.get<{ data_version: number }>("PRAGMA data_version");
    return row ? Number(row.data_version) : undefined;
  } catch {
    // Not an error to report: such a database has no other connections to hear from.
    return undefined;
  }
}

/** True when the main database is a file (other processes can write it); `:memory:` and temp ones cannot. */
export function isFileDatabase(driver: SqlDriver): boolean {
  try {
    const rows = driver.all<{ name: string; file: string | null }>("PRAGMA database_list");
    return rows.some((row) => row.name === "main" && typeof row.file === "string" && row.file !== "");
  } catch {
    return false;
  }
}

/**
 * Finds which sessions other connections changed once `PRAGMA data_version` moved, cheaply and bounded: the head
 * rows of the sessions somebody subscribed to (compared with a snapshot), and for store-wide subscribers the
 * sessions of message rows above the highest seq seen (at most {@link NEW_ROWS} rows).
 */
export class SqliteWatermark {
  private version: number;
  private readonly heads = new Map<string, string>();
  private maxSeq: number;
  private all = false;
  /** Sessions this store wrote since the last poll: their new rows and head changes may be its own. */
  private readonly local = new Set<string>();

  constructor(
    private readonly driver: SqlDriver,
    version: number,
  ) {
    this.version = version;
    this.maxSeq = 0;
  }

  /** The data version last seen: it moves when another connection commits (facts, messages, anything). */
  get seen(): number {
    return this.version;
  }

  /** Notes this store's own committed write to a session (`data_version` never moves for it). */
  wrote(sessionId: string): void {
    this.local.add(sessionId);
  }

  /**
   * Resets for what other connections changed since the last poll (none when `data_version` did not move: then
   * this store's own writes are taken into the snapshot, so they are never reported as another's later).
   */
  poll(interest: Interest, explained: ReadonlySet<string>): ChangeEvent[] {
    if (this.moved()) return this.changes(interest, explained);
    this.absorb();
    return [];
  }

  /** True when another connection committed since the last call. */
  private moved(): boolean {
    const now = dataVersion(this.driver);
    if (now === undefined || now === this.version) return false;
    this.version = now;
    return true;
  }

  /** Takes this store's own writes since the last poll into the snapshot and past the highest seq seen. */
  private absorb(): void {
    if (this.local.size === 0) return;
    const ids = [...this.local].filter((id) => this.heads.has(id));
    const heads = ids.map((id) => [id, this.heads.get(id) ?? GONE] as const);
    const maxSeq = this.maxSeq;
    this.compare(ids);
    if (this.all) this.maxSeq = this.highestSeq();
    if (dataVersion(this.driver) !== this.version) {
      // Another connection committed while this read: its change may be in it. Undo, and let the next poll
      // (which sees data_version move) treat these sessions as possibly written by both.
      for (const [id, signature] of heads) this.heads.set(id, signature);
      this.maxSeq = maxSeq;
      return;
    }
    this.local.clear();
  }

  /** Takes the snapshot of sessions newly subscribed to and forgets those nobody wants any more. */
  follow(interest: Interest): void {
    for (const id of this.heads.keys()) if (!interest.sessions.has(id)) this.heads.delete(id);
    const added = [...interest.sessions].filter((id) => !this.heads.has(id));
    if (added.length > 0) this.compare(added);
    // A store-wide subscriber that just arrived starts from now, not from whatever was written before it.
    if (interest.all && !this.all) this.maxSeq = this.highestSeq();
    this.all = interest.all;
  }

  /** Resets (origin "remote", no cursor) for what changed since the last call; `explained` sessions are skipped. */
  private changes(interest: Interest, explained: ReadonlySet<string>): ChangeEvent[] {
    const changed = new Set(this.compare([...interest.sessions]));
    let unknown = false;
    if (interest.all) {
      const found = this.newMessageSessions();
      if (found === null) unknown = true;
      else for (const id of found) changed.add(id);
      // A session this store wrote since the last poll may show only its own write: it explains nothing. When
      // nothing else explains the commit (an update, delete or compaction elsewhere), say so store-wide.
      const others = [...changed].some((id) => !this.local.has(id));
      if (!others && explained.size === 0) unknown = true;
    }
    const reason = "written by another connection without a change log";
    const events: ChangeEvent[] = [];
    if (unknown) {
      events.push({ type: "reset", reason, sessionId: "", wholeStore: true, cursor: null, origin: "remote" });
    }
    for (const sessionId of changed) {
      // The store-wide reset stands for a session this store wrote too: its own write needs no reset of its own.
      const covered = unknown && this.local.has(sessionId);
      if (!explained.has(sessionId) && !covered)
        events.push({ type: "reset", reason, sessionId, cursor: null, origin: "remote" });
    }
    this.local.clear();
    return events;
  }

  /** Updates the snapshot of `ids` and returns those whose signature differs from the one kept. */
  private compare(ids: readonly string[]): string[] {
    const changed: string[] = [];
    for (let start = 0; start < ids.length; start += CHUNK) {
      const chunk = ids.slice(start, start + CHUNK);
      const rows = this.driver.all<SignatureRow>(`${SIGNATURE} (${chunk.map(() => "?").join(", ")})`, chunk);
      const found = new Map(
        rows.map((row) => [row.id, `${row.num}/${row.leaf}/${row.n}/${row.at}/${row.c}`]),
      );
      for (const id of chunk) {
        const signature = found.get(id) ?? GONE;
        const before = this.heads.get(id);
        if (before !== undefined && before !== signature) changed.push(id);
        this.heads.set(id, signature);
      }
    }
    return changed;
  }

  /** Sessions with message rows above the highest seq seen, or null when there are too many rows to look at. */
  private newMessageSessions(): string[] | null {
    const rows = this.driver.all<{ num: number; seq: number }>(
      `SELECT session_num AS num, seq FROM agent_messages WHERE seq > ? ORDER BY seq LIMIT ${NEW_ROWS + 1}`,
      [this.maxSeq],
    );
    const last = rows.at(-1);
    if (last) this.maxSeq = Number(last.seq);
    if (rows.length > NEW_ROWS) {
      this.maxSeq = this.highestSeq();
      return null;
    }
    const nums = [...new Set(rows.map((row) => Number(row.num)))];
    const ids: string[] = [];
    for (let start = 0; start < nums.length; start += CHUNK) {
      const chunk = nums.slice(start, start + CHUNK);
      const found = this.driver.all<{ id: string }>(
        `SELECT session_id AS id FROM agent_session_heads WHERE num IN (${chunk.map(() => "?").join(", ")})`,
        chunk,
      );
      for (const row of found) ids.push(row.id);
    }
    return ids;
  }

  private highestSeq(): number {
    return Number(
      this.driver.get<{ seq: number | null }>("SELECT max(seq) AS seq FROM agent_messages")?.seq ?? 0,
    );
  }
}
