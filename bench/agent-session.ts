/**
 * The agent-session target: the library's own SQLite store through its public API (Session / SessionStore),
 * with the same connection settings as the floor. Bulk loads go through the very same append path, batched in
 * large transactions, so the built store is exactly what row-by-row appends would leave.
 */
import { Session } from "../src/session/session.js";
import { flushSearchIndex } from "../src/sql/search/sqlite-indexing.js";
import { appendRow } from "../src/sqlite/append.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type BenchMessage, inBatches, type StoreRow } from "./data.js";
import type { BenchTarget, TargetFactory } from "./targets.js";

const BATCH = 20_000;
// BENCH_SEARCH_MATCH=all asks every word (the search before ranked recall), to compare the two on one store. Read
// once: a `process.env` read costs a call into C++ (~1 µs), which the search timed around it would be charged.
const SEARCH_MATCH = process.env.BENCH_SEARCH_MATCH === "all" ? "all" : "any";

class AgentSessionTarget implements BenchTarget {
  readonly name = "agent-session";
  readonly cacheVersion = "agent-session-v3";
  private store: SqliteStore | undefined;

  private get open_(): SqliteStore {
    if (!this.store) throw new Error("agent-session target is not open");
    return this.store;
  }

  // BENCH_DRIVER=better-sqlite3 or node:sqlite picks the engine; default: the library's own choice.
  open(file: string): void {
    const driver = process.env.BENCH_DRIVER;
    if (driver !== undefined && driver !== "better-sqlite3" && driver !== "node:sqlite") {
      throw new Error(`BENCH_DRIVER must be better-sqlite3 or node:sqlite, got ${driver}`);
    }
    this.store = new SqliteStore(file, driver === undefined ? {} : { driver });
  }

  async append(sessionId: string, message: BenchMessage, parentId?: string | null): Promise<void> {
    await this.open_.session(sessionId).appendMessage(message, parentId);
  }

  async history(sessionId: string): Promise<unknown[]> {
    return this.open_.session(sessionId).getHistory();
  }

  async latestLeaf(sessionId: string, cold: boolean): Promise<unknown> {
    // Cold = a brand-new Session object, as an app would make per request.
    if (cold) return Session.create(this.open_).forSession(sessionId).getLatestLeaf();
    return this.open_.session(sessionId).getLatestLeaf();
  }

  async search(query: string, sessionId?: string): Promise<unknown[]> {
    const match = SEARCH_MATCH;
    return this.open_.searchMessages(
      query,
      sessionId === undefined ? { limit: 20, match } : { limit: 20, match, sessionId },
    );
  }

  bulkLoad(rows: Iterable<StoreRow>): void {
    const driver = this.open_.driver;
    for (const batch of inBatches(rows, BATCH)) {
      driver.transaction(() => {
        for (const row of batch) appendRow(driver, row.sessionId, row.message, { parentId: row.parentId });
      });
    }
    // Index the last partial batch, then merge the FTS segments the big transactions left, as the floor and the
    // reference do after a bulk load.
    flushSearchIndex(driver);
    driver.run("INSERT INTO agent_messages_fts(agent_messages_fts) VALUES ('optimize')");
  }

  async close(): Promise<void> {
    await this.store?.close();
    this.store = undefined;
  }
}

/** Returns the agent-session target factory. */
export async function load(): Promise<TargetFactory> {
  return () => new AgentSessionTarget();
}
