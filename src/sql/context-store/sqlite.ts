import { entryCharsSql } from "../../context/entry-keys.js";
import { type RecordColumns, recordColumns, recordParams } from "../../context/records.js";
import { type EntryCandidates, StoreBlocks, StoreEntries } from "../../context/store-base.js";
import type { ContextRecord, EntryHit } from "../../contract/context.js";
import { SessionError } from "../../errors.js";
import type { QueryLimits } from "../../search/limits.js";
import type { QueryTerm } from "../../search/query.js";
import { KEEP_RECORD, sqliteRecords } from "../context-records/sqlite.js";
import { deleteRecorded, recordedKeys } from "../context-records/steps.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { freeTextSql, sqlText } from "../engines/sqlite/free-text.js";
import { foldsToNothing, toFts5 } from "../engines/sqlite/fts.js";
import { runInTransaction, runProgram } from "../engines/sqlite/program.js";
import { keptRecord, type RecordRow, sameRecord, WRITE_TRIES } from "./records.js";
import {
  type BlockReadRow,
  type EntryRow,
  entryOpener,
  labelBlinds,
  readBlockRow,
  type StoredEntry,
  storedBlock,
  storedEntry,
} from "./sqlite-sealed.js";

const BLOCK_SQL = `SELECT ${freeTextSql("content", "content")}, sealed, session_id, owner FROM agent_context_blocks
  WHERE key = ?`;
const UPSERT_BLOCK = `INSERT INTO agent_context_blocks (key, content, sealed, updated_at, session_id, owner)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (key) DO UPDATE SET content = excluded.content, sealed = excluded.sealed, updated_at = excluded.updated_at,
    ${KEEP_RECORD}`;

/** Context-block rows in SQLite (one row per namespaced key). */
export class SqliteBlockStore extends StoreBlocks {
  constructor(private readonly driver: SqlDriver) {
    super();
  }

  // The driver refuses every statement with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected async readBlock(key: string): Promise<string | null> {
    const row = this.driver.get<BlockReadRow>(BLOCK_SQL, [key]);
    return row ? readBlockRow(this.driver, key, row) : null;
  }

  protected async writeBlock(key: string, content: string, record?: ContextRecord): Promise<void> {
    // In one transaction: the owner's key check is read, and recorded on its first write, with the row.
    this.driver.transaction(() =>
      this.upsert(
        key,
        content,
        record,
        this.driver.get<RecordRow>("SELECT session_id, owner FROM agent_context_blocks WHERE key = ?", [key]),
      ),
    );
  }

  // Sealed for the owner of the record the row keeps (its own, else this write's: KEEP_RECORD), read in the
  // caller's transaction.
  private upsert(key: string, content: string, record: ContextRecord | undefined, row?: RecordRow): void {
    const written = recordColumns(record);
    const stored = storedBlock(this.driver, key, content, keptRecord(row, written));
    const { sessionId, owner } = written;
    const now = new Date().toISOString();
    this.driver.run(UPSERT_BLOCK, [key, stored.content, stored.sealed, now, sessionId, owner]);
  }

  protected async writeBlockIf(
    key: string,
    expected: string | null,
    next: string,
    record?: ContextRecord,
  ): Promise<boolean> {
    // A write transaction (BEGIN IMMEDIATE) holds the lock from the read to the write, so no other connection or
    // process writes in between; the stored text is compared decoded, whichever form it was stored in.
    return this.driver.transaction(() => {
      const row = this.driver.get<BlockReadRow>(BLOCK_SQL, [key]);
      const current = row ? readBlockRow(this.driver, key, row) : null;
      if (current !== expected) return false;
      this.upsert(key, next, record, row);
      return true;
    });
  }

  protected async writeDeleteBlocks(keys: string[]): Promise<void> {
    this.driver.run("DELETE FROM agent_context_blocks WHERE key IN (SELECT value FROM json_each(?))", [
      JSON.stringify(keys),
    ]);
  }

  protected async readRecordedKeys(record: ContextRecord): Promise<string[]> {
    return runProgram(this.driver, recordedKeys(sqliteRecords, recordParams(record)));
  }

  protected async writeDeleteRecorded(record: ContextRecord): Promise<{ blocks: number; entries: number }> {
    return runInTransaction(this.driver, () => deleteRecorded(sqliteRecords, recordParams(record)));
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

  protected async writeEntry(
    label: string,
    key: string,
    content: string,
    record?: ContextRecord,
  ): Promise<void> {
    const written = recordColumns(record);
    // Sealed, with blind tokens for words and a keyed digest for its key, when the owner of the record the row
    // keeps has a key (sealed-context.ts, entry-keys.ts). The row is found by the key as stored for the record the
    // write would keep: a row recorded otherwise is sealed again for its record (its key stored as that one's).
    this.driver.transaction(() => {
      let kept = written;
      for (let tries = 1; ; tries++) {
        const stored = storedEntry(this.driver, label, key, content, kept);
        const old = this.driver.get<{ seq: number } & RecordRow>(
          "SELECT seq, session_id, owner FROM agent_search_entries WHERE label = ? AND key = ?",
          [label, stored.key],
        );
        const next = keptRecord(old, written);
        if (!old || sameRecord(next, kept)) return this.putEntry(label, key, stored, kept, old?.seq);
        if (tries === WRITE_TRIES) {
          throw new SessionError("STORAGE", `The record of entry "${key}" of "${label}" kept changing`);
        }
        kept = next;
      }
    });
  }

  // Writes a stored entry (over row `seq` when it has one) with its FTS row. A digest-keyed write replaces the row
  // of its key in clear (sealed before digests, or written before its owner had a key) recorded as this write
  // keeps or unrecorded, as an upsert of that key would have updated it.
  private putEntry(label: string, key: string, stored: StoredEntry, kept: RecordColumns, seq?: number): void {
    const now = new Date().toISOString();
    const { sessionId, owner } = kept;
    if (stored.key !== key) {
      const stale = this.driver.column<number>(
        `SELECT seq FROM agent_search_entries WHERE label = ? AND key = ?
           AND ((session_id IS NULL AND owner IS NULL) OR (session_id IS ? AND owner IS ?))`,
        [label, key, sessionId, owner],
      );
      for (const gone of stale) {
        this.driver.run("DELETE FROM agent_search_entries_fts WHERE rowid = ?", [gone]);
        this.driver.run("DELETE FROM agent_search_entries WHERE seq = ?", [gone]);
      }
    }
    if (seq !== undefined) {
      this.driver.run("DELETE FROM agent_search_entries_fts WHERE rowid = ?", [seq]);
      this.driver.run(
        `UPDATE agent_search_entries SET content = ?, sealed_chars = ?, updated_at = ?,
           session_id = CASE WHEN session_id IS NULL AND owner IS NULL THEN ? ELSE session_id END,
           owner = CASE WHEN session_id IS NULL AND owner IS NULL THEN ? ELSE owner END
         WHERE seq = ?`,
        [stored.content, stored.sealedChars, now, sessionId, owner, seq],
      );
    }
    const row =
      seq ??
      this.driver.get<{ seq: number }>(
        `INSERT INTO agent_search_entries (label, key, content, sealed_chars, created_at, updated_at, session_id, owner)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
        [label, stored.key, stored.content, stored.sealedChars, now, now, sessionId, owner],
      )!.seq;
    this.driver.run("INSERT INTO agent_search_entries_fts (rowid, text) VALUES (?, ?)", [row, stored.text]);
  }

  protected async readCandidates(
    label: string,
    terms: QueryTerm[],
    cap: number,
  ): Promise<EntryCandidates | undefined> {
    // Each term's newest matches of this label (filtered inside the window: filtered after it, the newest matches
    // of other labels hid every entry of this one); also as its owner's blind tokens when it has a key.
    const blinds = labelBlinds(this.driver, label);
    const matches = terms.map((term) =>
      foldsToNothing([term])
        ? []
        : this.driver.column<number>(
            `SELECT f.rowid FROM agent_search_entries_fts f JOIN agent_search_entries l ON l.seq = f.rowid
             WHERE agent_search_entries_fts MATCH ? AND l.label = ? ORDER BY f.rowid DESC LIMIT ?`,
            [toFts5([term], "text", undefined, blinds), label, cap],
          ),
    );
    const candidates = [...new Set(matches.flat())];
    if (candidates.length === 0) return undefined;
    const lengths = new Map(
      this.driver.tuples<[number, number]>(
        `SELECT e.seq, ${entryCharsSql("e")} AS chars FROM json_each(?) j
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

  protected async readEntries(label: string, seqs: number[]): Promise<Map<number, EntryHit>> {
    const rows = this.driver.all<EntryRow & { seq: number; key: unknown }>(
      `SELECT e.seq, CAST(e.key AS BLOB) AS key, ${freeTextSql("e.content", "content")}, e.sealed_chars,
         e.session_id, e.owner FROM json_each(?) j JOIN agent_search_entries e ON e.seq = j.value`,
      [JSON.stringify(seqs)],
    );
    const open = entryOpener(this.driver, label);
    return new Map(
      rows.map((row) => {
        const { key, content } = open(sqlText(row.key), row);
        return [row.seq, { key, content }];
      }),
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
