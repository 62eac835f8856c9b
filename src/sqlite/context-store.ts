import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import { perTermCap, rankEntries, recallTerms } from "../search/rank.js";
import { entryText, searchableText } from "../search/tokens.js";
import {
  assertBlockKey,
  assertContent,
  assertStoredKey,
  isBlockKey,
  isLookupKey,
  lookupKeys,
} from "../store/keys.js";
import { SEARCH_CANDIDATES, searchLimit } from "../store/limits.js";
import type { BlockStore, EntryHit, EntryStore } from "../store/types.js";
import type { SqlDriver } from "./connection/driver.js";
import { freeTextSql, readFreeText, sqlText, storedFreeText } from "./connection/free-text.js";
import { foldsToNothing, toFts5 } from "./search/fts.js";

/** Context-block rows in SQLite (one row per namespaced key). */
export class SqliteBlockStore implements BlockStore {
  constructor(private readonly driver: SqlDriver) {}

  async getBlock(key: string): Promise<string | null> {
    if (!isBlockKey(key)) return null;
    const row = this.driver.get<{ content: unknown; content_encoded: unknown }>(
      `SELECT ${freeTextSql("content", "content")} FROM agent_context_blocks WHERE key = ?`,
      [key],
    );
    return row ? readFreeText(row.content, row.content_encoded) : null;
  }

  async setBlock(key: string, content: string): Promise<void> {
    assertBlockKey(key);
    assertContent(content);
    this.driver.run(
      `INSERT INTO agent_context_blocks (key, content, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
      [key, storedFreeText(content), new Date().toISOString()],
    );
  }

  async deleteBlocks(keys: readonly string[]): Promise<void> {
    const known = lookupKeys(keys);
    if (known.length === 0) return;
    this.driver.run("DELETE FROM agent_context_blocks WHERE key IN (SELECT value FROM json_each(?))", [
      JSON.stringify(known),
    ]);
  }
}

/** Searchable entries in SQLite: a table plus a contentless FTS5 index written in the same transaction. */
export class SqliteEntryStore implements EntryStore {
  constructor(
    private readonly driver: SqlDriver,
    private readonly limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  ) {}

  async setEntry(label: string, key: string, content: string): Promise<void> {
    assertStoredKey(label, "A label");
    assertStoredKey(key, "An entry key");
    assertContent(content);
    const now = new Date().toISOString();
    this.driver.transaction(() => {
      const old = this.driver.get<{ seq: number }>(
        "SELECT seq FROM agent_search_entries WHERE label = ? AND key = ?",
        [label, key],
      );
      if (old) {
        this.driver.run("DELETE FROM agent_search_entries_fts WHERE rowid = ?", [old.seq]);
        this.driver.run("UPDATE agent_search_entries SET content = ?, updated_at = ? WHERE seq = ?", [
          storedFreeText(content),
          now,
          old.seq,
        ]);
      }
      const seq =
        old?.seq ??
        this.driver.get<{ seq: number }>(
          "INSERT INTO agent_search_entries (label, key, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING seq",
          [label, key, storedFreeText(content), now, now],
        )!.seq;
      this.driver.run("INSERT INTO agent_search_entries_fts (rowid, text) VALUES (?, ?)", [
        seq,
        searchableText(entryText(key, content)),
      ]);
    });
  }

  async searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]> {
    const max = searchLimit(limit ?? 10);
    // Ranked recall, as message search: any content word makes a candidate, more of them rank first.
    const terms = typeof query === "string" ? recallTerms(query, this.limits) : [];
    if (terms.length === 0 || max === 0 || !isLookupKey(label)) return [];
    // Each term's newest matches of this label (filtered inside the window: filtered after it, the newest matches
    // of other labels hid every entry of this one).
    const cap = perTermCap(terms.length, SEARCH_CANDIDATES);
    const matches = terms.map((term) =>
      foldsToNothing([term])
        ? []
        : this.driver.column<number>(
            `SELECT f.rowid FROM agent_search_entries_fts f JOIN agent_search_entries l ON l.seq = f.rowid
             WHERE agent_search_entries_fts MATCH ? AND l.label = ? ORDER BY f.rowid DESC LIMIT ?`,
            [toFts5([term], "text"), label, cap],
          ),
    );
    const candidates = [...new Set(matches.flat())];
    if (candidates.length === 0) return [];
    const lengths = new Map(
      this.driver.tuples<[number, number]>(
        `SELECT e.seq, length(e.key) + length(e.content) AS chars FROM json_each(?) j
         JOIN agent_search_entries e ON e.seq = j.value`,
        [JSON.stringify(candidates)],
      ),
    );
    const documents = this.driver.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM agent_search_entries WHERE label = ?",
      [label],
    )?.n;
    const top = rankEntries(matches, (seq) => lengths.get(seq), documents ?? candidates.length).slice(0, max);
    const rows = this.driver.all<{ seq: number; key: unknown; content: unknown; content_encoded: unknown }>(
      `SELECT e.seq, CAST(e.key AS BLOB) AS key, ${freeTextSql("e.content", "content")} FROM json_each(?) j
       JOIN agent_search_entries e ON e.seq = j.value`,
      [JSON.stringify(top)],
    );
    const bySeq = new Map(rows.map((row) => [row.seq, row]));
    return top.flatMap((seq) => {
      const row = bySeq.get(seq);
      return row === undefined
        ? []
        : [{ key: sqlText(row.key), content: readFreeText(row.content, row.content_encoded) }];
    });
  }

  async countEntries(label: string): Promise<number> {
    if (!isLookupKey(label)) return 0;
    return (
      this.driver.get<{ n: number }>("SELECT COUNT(*) AS n FROM agent_search_entries WHERE label = ?", [
        label,
      ])?.n ?? 0
    );
  }

  async deleteEntries(label: string): Promise<void> {
    if (!isLookupKey(label)) return;
    this.driver.transaction(() => {
      this.driver.run(
        "DELETE FROM agent_search_entries_fts WHERE rowid IN (SELECT seq FROM agent_search_entries WHERE label = ?)",
        [label],
      );
      this.driver.run("DELETE FROM agent_search_entries WHERE label = ?", [label]);
    });
  }
}
