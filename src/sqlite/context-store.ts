import { type EntryCandidates, StoreBlocks, StoreEntries } from "../context/store-base.js";
import type { EntryHit } from "../contract/context.js";
import type { QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import { entryText, searchableText } from "../search/tokens.js";
import type { SqlDriver } from "./connection/driver.js";
import { freeTextSql, readFreeText, sqlText, storedFreeText } from "./connection/free-text.js";
import { foldsToNothing, toFts5 } from "./search/fts.js";

/** Context-block rows in SQLite (one row per namespaced key). */
export class SqliteBlockStore extends StoreBlocks {
  constructor(private readonly driver: SqlDriver) {
    super();
  }

  // The driver refuses every statement with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected async readBlock(key: string): Promise<string | null> {
    const row = this.driver.get<{ content: unknown; content_encoded: unknown }>(
      `SELECT ${freeTextSql("content", "content")} FROM agent_context_blocks WHERE key = ?`,
      [key],
    );
    return row ? readFreeText(row.content, row.content_encoded) : null;
  }

  protected async writeBlock(key: string, content: string): Promise<void> {
    this.driver.run(
      `INSERT INTO agent_context_blocks (key, content, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
      [key, storedFreeText(content), new Date().toISOString()],
    );
  }

  protected async writeBlockIf(key: string, expected: string | null, next: string): Promise<boolean> {
    // A write transaction (BEGIN IMMEDIATE) holds the lock from the read to the write, so no other connection or
    // process writes in between; the stored text is compared decoded, whichever form it was stored in.
    return this.driver.transaction(() => {
      const row = this.driver.get<{ content: unknown; content_encoded: unknown }>(
        `SELECT ${freeTextSql("content", "content")} FROM agent_context_blocks WHERE key = ?`,
        [key],
      );
      const current = row ? readFreeText(row.content, row.content_encoded) : null;
      if (current !== expected) return false;
      this.driver.run(
        `INSERT INTO agent_context_blocks (key, content, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
        [key, storedFreeText(next), new Date().toISOString()],
      );
      return true;
    });
  }

  protected async writeDeleteBlocks(keys: string[]): Promise<void> {
    this.driver.run("DELETE FROM agent_context_blocks WHERE key IN (SELECT value FROM json_each(?))", [
      JSON.stringify(keys),
    ]);
  }
}

/** Searchable entries in SQLite: a table plus a contentless FTS5 index written in the same transaction. */
export class SqliteEntryStore extends StoreEntries {
  constructor(
    private readonly driver: SqlDriver,
    limits?: QueryLimits,
  ) {
    super(limits);
  }

  // The driver refuses every statement with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected async writeEntry(label: string, key: string, content: string): Promise<void> {
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

  protected async readCandidates(
    label: string,
    terms: QueryTerm[],
    cap: number,
  ): Promise<EntryCandidates | undefined> {
    // Each term's newest matches of this label (filtered inside the window: filtered after it, the newest matches
    // of other labels hid every entry of this one).
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
    if (candidates.length === 0) return undefined;
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
    return { matches, lengths, documents: documents ?? candidates.length };
  }

  protected async readEntries(_label: string, seqs: number[]): Promise<Map<number, EntryHit>> {
    const rows = this.driver.all<{ seq: number; key: unknown; content: unknown; content_encoded: unknown }>(
      `SELECT e.seq, CAST(e.key AS BLOB) AS key, ${freeTextSql("e.content", "content")} FROM json_each(?) j
       JOIN agent_search_entries e ON e.seq = j.value`,
      [JSON.stringify(seqs)],
    );
    return new Map(
      rows.map((row) => [
        row.seq,
        { key: sqlText(row.key), content: readFreeText(row.content, row.content_encoded) },
      ]),
    );
  }

  protected async readCount(label: string): Promise<number> {
    return (
      this.driver.get<{ n: number }>("SELECT COUNT(*) AS n FROM agent_search_entries WHERE label = ?", [
        label,
      ])?.n ?? 0
    );
  }

  protected async writeDeleteEntries(label: string): Promise<void> {
    this.driver.transaction(() => {
      this.driver.run(
        "DELETE FROM agent_search_entries_fts WHERE rowid IN (SELECT seq FROM agent_search_entries WHERE label = ?)",
        [label],
      );
      this.driver.run("DELETE FROM agent_search_entries WHERE label = ?", [label]);
    });
  }
}
