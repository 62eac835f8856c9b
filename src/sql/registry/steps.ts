/**
 * The session registry's reads and one-row writes written once for both SQL engines, over a statement table per
 * engine (sqlite.ts, postgres.ts beside this file): each is one statement answering the
 * row(s) it read or wrote. A create, a delete and an erasure differ on purpose (SQLite retokenizes an owned
 * session's messages and deletes its content in several statements, Postgres does either in one with CTEs, and
 * releases the session's attachments), so each engine's registry writes those itself (and SQLite an owned create).
 */
import type {
  NewSessionRecord,
  SessionInfo,
  SessionListOptions,
  SessionUsage,
} from "../../contract/registry.js";
import type { OwnerGuard } from "../../store/crypto/write-guard.js";
import type { ChangeFeed } from "../../store/feed/feed.js";
import { type RegistryChange, StoreRegistry } from "../../store/registry-base.js";
import { type SessionInfoRow, toSessionInfo } from "../../store/registry-rows.js";
import { assertUsageFits, type UsageTotals } from "../../store/usage-totals.js";
import type { Program, Row, Statement } from "../program.js";

/** One engine's statements of the registry; each answers the rows of `agent_sessions` it read or wrote. */
export interface RegistryStatements {
  /**
   * The row inserted with zero counters; none when the id is registered, or when `guard` (what its name's key
   * look-up found for the owner, crypto/write-guard.ts) no longer holds.
   */
  create(record: NewSessionRecord, guard?: OwnerGuard): Statement;
  get(id: string): Statement;
  /** A page, newest activity first (of `owner` when given). */
  page(options: SessionListOptions): Statement;
  /** `pageSize` rows in the order of ids, after `after` (null: the first page), of `source` when given. */
  scan(pageSize: number, source: string | undefined, after: string | null): Statement;
  /** The number of rows (`n`). */
  count(): Statement;
  /**
   * `change` applied (none: a touch), `updated_at` and the activity order bumped; a name only while its guard
   * holds (none answered otherwise).
   */
  change(id: string, change: RegistryChange): Statement;
  /** `usage` added where every total stays in range (none updated otherwise), as a change. */
  usage(id: string, usage: Required<SessionUsage>): Statement;
  /** The row's counters, locked against other writers for the rest of the transaction. */
  counters(id: string): Statement;
  pin(id: string, pinned: boolean): Statement;
}

const info = (rows: Row[]) => (rows[0] ? toSessionInfo(rows[0] as unknown as SessionInfoRow) : null);

function* one(statement: Statement): Program<Row[]> {
  return yield statement;
}

/** The session a statement of the table answers (null: none). */
export function* sessionRow(statement: Statement): Program<SessionInfo | null> {
  return info(yield statement);
}

/** The registry of an SQL store: the engine runs the programs and writes a delete and an erasure. */
export abstract class SqlRegistry extends StoreRegistry {
  constructor(
    private readonly s: RegistryStatements,
    publisher?: { readonly feed: ChangeFeed },
  ) {
    super(publisher);
  }

  /** Runs a program, in one write transaction when `transaction`. */
  protected abstract run<T>(program: () => Program<T>, transaction: boolean): Promise<T>;

  protected async writeCreate(record: NewSessionRecord, guard?: OwnerGuard): Promise<SessionInfo | null> {
    return info(await this.run(() => one(this.s.create(record, guard)), false));
  }

  protected async readRow(id: string): Promise<SessionInfo | null> {
    return info(await this.run(() => one(this.s.get(id)), false));
  }

  protected async readPage(options: SessionListOptions): Promise<SessionInfo[]> {
    const rows = await this.run(() => one(this.s.page(options)), false);
    return rows.map((row) => toSessionInfo(row as unknown as SessionInfoRow));
  }

  protected async *readScan(pageSize: number, source: string | undefined): AsyncGenerator<SessionInfo> {
    let after: string | null = null;
    for (;;) {
      const rows = await this.run(() => one(this.s.scan(pageSize, source, after)), false);
      for (const row of rows) yield toSessionInfo(row as unknown as SessionInfoRow);
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < pageSize) return;
      after = String(last.id);
    }
  }

  protected async readCount(): Promise<number> {
    const [row] = await this.run(() => one(this.s.count()), false);
    return Number(row?.n ?? 0);
  }

  protected async writeChange(id: string, change: RegistryChange): Promise<SessionInfo | null> {
    return info(await this.run(() => one(this.s.change(id, change)), false));
  }

  protected async writeUsage(id: string, usage: Required<SessionUsage>): Promise<SessionInfo | null> {
    const added = info(await this.run(() => one(this.s.usage(id, usage)), false));
    if (added) return added;
    // No row took it: an unknown id or a refused total. Under the row's lock (its totals cannot change meanwhile)
    // tell which; a row that fits now (a concurrent addition moved it back) takes the addition after all.
    const s = this.s;
    return this.run(function* () {
      const [totals] = yield s.counters(id);
      if (!totals) return null;
      assertUsageFits(id, totals as unknown as UsageTotals, usage);
      return info(yield s.usage(id, usage));
    }, true);
  }

  protected async writePin(id: string, pinned: boolean): Promise<SessionInfo | null> {
    return info(await this.run(() => one(this.s.pin(id, pinned)), false));
  }
}
