/**
 * The reference implementation, agents@0.22.0 `agents/experimental/memory/session`, run in plain Node
 * over better-sqlite3 through the Durable Object `sql` tagged-template shape.
 */
import type Database from "better-sqlite3";
import { type BenchMessage, inBatches, type StoreRow } from "./data.js";
import { messageText, openDatabase } from "./floor.js";
import { type BenchTarget, OverBudget, type TargetFactory } from "./targets.js";

type SessionModule = typeof import("agents/experimental/memory/session");
type Session = InstanceType<SessionModule["Session"]>;
type SessionManager = InstanceType<SessionModule["SessionManager"]>;
type AgentSessionProvider = InstanceType<SessionModule["AgentSessionProvider"]>;
type SqlValue = string | number | boolean | null;
type Stmt = Database.Statement<unknown[], unknown>;

/**
 * The `this.sql` of a Durable Object over better-sqlite3: the template's strings joined with `?`,
 * `.all()` for statements that return rows, `.run()` (returning []) for the others; statements are
 * prepared once per template call site (workerd caches prepared statements too).
 */
export class SqlAdapter {
  private cache = new WeakMap<TemplateStringsArray, Stmt>();
  constructor(readonly db: Database.Database) {}

  sql<T = Record<string, SqlValue>>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] {
    let stmt = this.cache.get(strings);
    if (!stmt) {
      stmt = this.db.prepare(strings.join("?"));
      this.cache.set(strings, stmt);
    }
    const args = values.map((v) => (typeof v === "boolean" ? (v ? 1 : 0) : v));
    if (stmt.reader) return stmt.all(...args) as T[];
    stmt.run(...args);
    return [];
  }
}

/**
 * The reference target. Appends go through `Session.appendMessage`, each wrapped in BEGIN IMMEDIATE
 * … COMMIT, as a Durable Object commits one request's writes together (set BENCH_REF_AUTOCOMMIT=1
 * to let each of its statements commit on its own instead).
 *
 * Session objects are `Session.create(new AgentSessionProvider(agent, sessionId))`. A warm object is
 * kept per session and primed with the latest-leaf id the provider caches after its own appends
 * (`activeLeafId` = the session's newest row), i.e. the state it would have had it written the
 * bulk-loaded rows itself. A cold object is new and unprimed: its first leaf look-up is the
 * provider's anti-join, which SQLite plans over the session_id index (O(n²) in session size); it is
 * refused with OverBudget when n² × the cost per row pair (measured on smaller sessions, at least
 * 1.3 µs above 2,000 messages) exceeds BENCH_BUDGET_S.
 */
export class ReferenceTarget implements BenchTarget {
  readonly name = "reference";
  readonly cacheVersion = "agents-0.22.0-2";
  private db: Database.Database | undefined;
  private agent: SqlAdapter | undefined;
  private manager: SessionManager | undefined;
  private sessions = new Map<string, Session>();
  private sizes = new Map<string, number>();
  private pairNs = 250;
  private readonly autocommit = process.env.BENCH_REF_AUTOCOMMIT === "1";
  private readonly budgetNs = Number(process.env.BENCH_BUDGET_S ?? "60") * 1e9;

  constructor(private readonly mod: SessionModule) {}

  private get sqlAgent(): SqlAdapter {
    if (!this.agent) throw new Error("reference: not open");
    return this.agent;
  }

  private fresh(sessionId: string): { session: Session; provider: AgentSessionProvider } {
    const provider = new this.mod.AgentSessionProvider(this.sqlAgent, sessionId);
    return { session: this.mod.Session.create(provider), provider };
  }

  /** The long-lived, primed Session object of a session (what an agent keeps between requests). */
  private session(sessionId: string): Session {
    let s = this.sessions.get(sessionId);
    if (!s) {
      const { session, provider } = this.fresh(sessionId);
      const newest = this.db!.prepare(
        "SELECT id FROM assistant_messages WHERE session_id = ? ORDER BY rowid DESC LIMIT 1",
      ).pluck();
      const leaf = newest.get(sessionId) as string | undefined;
      if (leaf !== undefined) (provider as unknown as { activeLeafId?: string }).activeLeafId = leaf;
      s = session;
      this.sessions.set(sessionId, s);
    }
    return s;
  }

  open(file: string): void {
    this.db = openDatabase(file);
    this.agent = new SqlAdapter(this.db);
    // Let the package create its own schema: provider tables, then SessionManager's.
    new this.mod.AgentSessionProvider(this.agent, "").getPathLength();
    this.manager = new this.mod.SessionManager(this.agent);
  }

  async append(sessionId: string, message: BenchMessage, parentId?: string | null): Promise<void> {
    const session = this.session(sessionId);
    if (this.autocommit) return session.appendMessage(message, parentId);
    const db = this.db!;
    db.exec("BEGIN IMMEDIATE");
    try {
      await session.appendMessage(message, parentId);
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  }

  async history(sessionId: string): Promise<unknown[]> {
    return this.session(sessionId).getHistory();
  }

  async latestLeaf(sessionId: string, cold: boolean): Promise<unknown> {
    if (!cold) return this.session(sessionId).getLatestLeaf();
    let n = this.sizes.get(sessionId);
    if (n === undefined) {
      const count = this.db!.prepare("SELECT COUNT(*) FROM assistant_messages WHERE session_id = ?").pluck();
      n = count.get(sessionId) as number;
      this.sizes.set(sessionId, n);
    }
    // Sessions larger than SQLite's page cache pay a page fetch per row pair: 126 s (1.26 µs/pair)
    // was measured for n = 10,000 in the 100k-message store, so estimate big ones at 1.3 µs/pair.
    const estNs = n * n * (n > 2_000 ? Math.max(this.pairNs, 1_300) : this.pairNs);
    if (estNs > this.budgetNs) {
      const est = estNs / 1e9 >= 120 ? `${Math.round(estNs / 6e10)} min` : `${Math.round(estNs / 1e9)} s`;
      throw new OverBudget(`n/a (too slow: cold leaf look-up is O(n²), est. ${est} for n=${n})`);
    }
    const t0 = process.hrtime.bigint();
    const leaf = await this.fresh(sessionId).session.getLatestLeaf();
    if (n >= 300) this.pairNs = Number(process.hrtime.bigint() - t0) / (n * n);
    return leaf;
  }

  /** Scoped: `Session.search` (query as one phrase, bm25); unscoped: `SessionManager.search` (words ANDed). */
  async search(query: string, sessionId?: string): Promise<unknown[]> {
    if (sessionId !== undefined) return this.session(sessionId).search(query);
    return this.manager!.search(query);
  }

  /**
   * Bulk path writing exactly the rows `AgentSessionProvider.appendMessage` writes (message row with
   * the whole JSON, FTS row with the text parts), 20,000 per transaction, without its per-append
   * look-ups (parent ids come with the rows); the FTS index is optimized at the end like the floor's.
   */
  bulkLoad(rows: Iterable<StoreRow>): void {
    const db = this.db!;
    const insert = db.prepare(
      "INSERT INTO assistant_messages (id, session_id, parent_id, role, content) VALUES (?, ?, ?, ?, ?)",
    );
    const fts = db.prepare("INSERT INTO assistant_fts (id, session_id, role, content) VALUES (?, ?, ?, ?)");
    const flush = db.transaction((batch: StoreRow[]) => {
      for (const r of batch) {
        const m = r.message;
        insert.run(m.id, r.sessionId, r.parentId, m.role, JSON.stringify(m));
        const text = messageText(m);
        if (text) fts.run(m.id, r.sessionId, m.role, text);
      }
    });
    for (const batch of inBatches(rows, 20_000)) flush.immediate(batch);
    db.exec("INSERT INTO assistant_fts(assistant_fts) VALUES ('optimize')");
  }

  close(): void {
    this.sessions.clear();
    this.sizes.clear();
    this.manager = undefined;
    this.agent = undefined;
    this.db?.close();
    this.db = undefined;
  }
}

/** Imports the reference module once (plain Node, no workerd stubs needed) and returns the factory. */
export async function load(): Promise<TargetFactory> {
  const mod: SessionModule = await import("agents/experimental/memory/session");
  return () => new ReferenceTarget(mod);
}
