import { messageText, parseMessage } from "../message.js";
import { parseQuery, toFts5 } from "../search/query.js";
import type { AdoptionReport, AdoptOptions } from "../store/adopt.js";
import { SEARCH_CANDIDATES, searchBranch, searchLimit } from "../store/limits.js";
import type {
  ContextCapableStore,
  RegistryCapableStore,
  StoreSearchOptions,
  TransferCapableStore,
} from "../store/types.js";
import type { SearchResult } from "../types.js";
import { adoptOnOpen, adoptReference } from "./adopt.js";
import { ensureHead } from "./append.js";
import { SqliteBlockStore, SqliteEntryStore } from "./context-store.js";
import type { SqlDriver } from "./driver.js";
import { FamilyExpander } from "./fts-families.js";
import { migrate } from "./migrations.js";
import { openSqlite, type SqliteOptions, type SqliteSource } from "./open.js";
import { SqliteSessionRegistry } from "./registry.js";
import { flushSearchIndex, matchPending } from "./search-index.js";
import { SqliteSessionProvider } from "./session-provider.js";
import { SqliteTransfer } from "./transfer.js";
import { isAncestor, type NodeRow, nodeBySeq } from "./tree.js";

interface Hit {
  seq: number;
  id: string;
  role: string;
  content: string;
  created_at: string;
  session_id: string;
  session_num: number;
  leaf_seq: number | null;
  message_count: number;
}

// bm25 over the newest SEARCH_CANDIDATES matches only; the sid column (the session token) weighs nothing.
const RANKED_SQL = `SELECT seq FROM (
    SELECT rowid AS seq, bm25(agent_messages_fts, 1.0, 0.0) AS score FROM agent_messages_fts
    WHERE agent_messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?
  ) ORDER BY score, seq DESC`;

/** Sessions in one SQLite database: a file path, `:memory:`, a database handle or a `sql`-tag object. */
export class SqliteStore implements ContextCapableStore, RegistryCapableStore, TransferCapableStore {
  readonly backend = "sqlite";
  /** @internal the connection every provider of this store shares. */
  readonly driver: SqlDriver;
  /** Context blocks and cached prompts. */
  readonly blocks: SqliteBlockStore;
  /** Searchable entries of search blocks. */
  readonly entries: SqliteEntryStore;
  /** Named sessions for SessionManager (added with the manager). */
  readonly registry: SqliteSessionRegistry;
  /** Lossless export and import of whole sessions (the CLI's `export` / `import`). */
  readonly transfer: SqliteTransfer;
  /**
   * What opening this store adopted from the reference's tables (`assistant_messages`, …) found in the same
   * database, or null when there was nothing to adopt (or it was adopted before: it runs once, recorded).
   */
  readonly adopted: AdoptionReport | null;
  private readonly families: FamilyExpander;
  private closed = false;

  constructor(source: SqliteSource, options: SqliteOptions = {}) {
    this.driver = openSqlite(source, options);
    try {
      migrate(this.driver);
      this.adopted = adoptOnOpen(this.driver);
    } catch (error) {
      this.driver.close();
      throw error;
    }
    this.blocks = new SqliteBlockStore(this.driver);
    this.entries = new SqliteEntryStore(this.driver);
    this.registry = new SqliteSessionRegistry(this.driver);
    this.transfer = new SqliteTransfer(this.driver);
    this.families = new FamilyExpander(this.driver, "agent_messages_fts");
  }

  /**
   * Adopts the reference's tables again (idempotent: rows already adopted are skipped and verified), e.g. after
   * the reference wrote more, and optionally drops them once everything is verified; null when there are none.
   */
  async adoptReference(options: AdoptOptions = {}): Promise<AdoptionReport | null> {
    return adoptReference(this.driver, options);
  }

  /** The storage contract for one session (`""` = the default unnamed session). */
  session(sessionId: string): SqliteSessionProvider {
    return new SqliteSessionProvider(this, sessionId);
  }

  /** @internal the numeric key of a session, optionally creating its head row. */
  sessionNum(sessionId: string, create: boolean): number | undefined {
    if (create) return ensureHead(this.driver, sessionId).num;
    return this.driver.get<{ num: number }>("SELECT num FROM agent_session_heads WHERE session_id = ?", [
      sessionId,
    ])?.num;
  }

  /**
   * Full-text search. Relevance (bm25) is ranked among the newest matches only (see SEARCH_CANDIDATES), so a
   * common word costs the same in a store of a million messages as in a small one; a session filter goes into
   * the FTS query itself as a token rather than a join.
   */
  async searchMessages(query: string, options: StoreSearchOptions = {}): Promise<SearchResult[]> {
    const limit = searchLimit(options.limit);
    const branch = searchBranch(options.branch);
    if (typeof query !== "string" || limit === 0) return [];
    const terms = parseQuery(query);
    if (terms.length === 0) return [];
    // Every stored message is searchable: pending rows are indexed first, or matched here when this connection
    // cannot write the index (read-only), newest first ahead of the indexed matches.
    const indexed = flushSearchIndex(this.driver);
    const sessionNum =
      options.sessionId === undefined ? undefined : this.sessionNum(options.sessionId, false);
    if (options.sessionId !== undefined && sessionNum === undefined) return [];
    const unindexed = indexed ? [] : matchPending(this.driver, terms, sessionNum);
    const families = this.families.families(terms);
    // A word whose family has no indexed term cannot match an indexed message.
    const noMatch = [...families.values()].some((family) => family.length === 0);
    let match = toFts5(terms, "text", families);
    if (sessionNum !== undefined) match = `sid : "s${sessionNum}" AND ${match}`;
    const ranked = noMatch ? [] : this.driver.column<number>(RANKED_SQL, [match, SEARCH_CANDIDATES]);
    const results: SearchResult[] = [];
    const leaves = new Map<number, NodeRow | undefined>();
    for (const seq of [...unindexed, ...ranked]) {
      if (results.length >= limit) break;
      const hit = this.driver.get<Hit>(
        `SELECT m.seq, m.id, m.role, m.content, m.created_at, h.session_id, h.num AS session_num, h.leaf_seq,
           h.message_count
         FROM agent_messages m JOIN agent_session_heads h ON h.num = m.session_num WHERE m.seq = ?`,
        [seq],
      );
      if (!hit) continue;
      const onActivePath = this.onActivePath(hit, leaves);
      if (branch === "active" && !onActivePath) continue;
      const message = parseMessage(hit.content);
      results.push({
        id: hit.id,
        role: hit.role,
        content: message ? messageText(message) : "",
        createdAt: hit.created_at,
        sessionId: hit.session_id,
        onActivePath,
      });
    }
    return results;
  }

  private onActivePath(hit: Hit, leaves: Map<number, NodeRow | undefined>): boolean {
    if (hit.leaf_seq === null) return false;
    if (!leaves.has(hit.session_num)) leaves.set(hit.session_num, nodeBySeq(this.driver, hit.leaf_seq));
    const leaf = leaves.get(hit.session_num);
    if (!leaf) return false;
    // A session whose message count equals its active path's length has no other branch: nothing to check.
    if (hit.message_count === leaf.depth + 1) return true;
    const node = nodeBySeq(this.driver, hit.seq);
    return node !== undefined && isAncestor(this.driver, node, leaf);
  }

  /** Indexes pending messages (so readers that cannot write find everything) and closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      flushSearchIndex(this.driver);
    } finally {
      this.driver.close();
    }
  }
}
