import { entryCharsSql } from "../../context/entry-keys.js";
import { recordColumns, recordParams } from "../../context/records.js";
import { type EntryCandidates, StoreBlocks, StoreEntries } from "../../context/store-base.js";
import type { ContextRecord, EntryHit } from "../../contract/context.js";
import type { QueryLimits } from "../../search/limits.js";
import type { QueryTerm } from "../../search/query.js";
import { postgresRecords } from "../context-records/postgres.js";
import { deleteRecorded, recordedKeys } from "../context-records/steps.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { termTsqueries } from "../engines/postgres/fts.js";
import { runInTransaction, runProgram } from "../engines/postgres/program.js";
import { encodeContent } from "../engines/postgres/text.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { writeBlockRow, writeEntryRow } from "./postgres-guard.js";
import {
  type BlockRow,
  type EntryRow,
  entryOpener,
  labelBlinds,
  readBlockRow,
  writeSealedRow,
} from "./postgres-sealed.js";
import { keptRecord, type RecordRow } from "./records.js";

type Ready = () => Promise<Executor>;

/**
 * Runs a guarded block or entry write: on a Citus cluster in a transaction, since its guard is a statement before
 * the write there (context-guard.ts); on one server each statement on its own, as the guard is inside the write's.
 */
async function guardedWrite(
  ready: Ready,
  t: KeyedTables,
  write: (query: Query) => Promise<void>,
): Promise<void> {
  const executor = await ready();
  return t.layout.guardsInside ? write(executor.query.bind(executor)) : executor.transaction(write);
}

/** Key/value rows for context blocks and cached prompts. */
export class PostgresBlockStore extends StoreBlocks {
  constructor(
    private readonly ready: Ready,
    private readonly t: KeyedTables,
  ) {
    super();
  }

  // `ready()` refuses with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected async readBlock(key: string): Promise<string | null> {
    const executor = await this.ready();
    const query = executor.query.bind(executor);
    const [row] = await query<BlockRow>(
      `SELECT content, content_json, sealed, session_id, owner FROM ${this.t.blocks} WHERE key = $1`,
      [key],
    );
    return row ? readBlockRow(query, this.t, key, row) : null;
  }

  protected async writeBlock(key: string, content: string, record?: ContextRecord): Promise<void> {
    // Sealed when the owner of the record the row keeps has a key (sealed-context.ts), its statement guarded as a
    // message's (context-guard.ts): one statement unless the row is recorded otherwise than this write.
    await guardedWrite(this.ready, this.t, (query) =>
      writeSealedRow(
        recordColumns(record),
        (kept) => writeBlockRow(query, this.t, key, content, kept),
        async () =>
          (await query<RecordRow>(`SELECT session_id, owner FROM ${this.t.blocks} WHERE key = $1`, [key]))[0],
      ),
    );
  }

  protected async readRecordedKeys(record: ContextRecord): Promise<string[]> {
    const executor = await this.ready();
    return runProgram(executor.query, recordedKeys(postgresRecords(this.t), recordParams(record)));
  }

  protected async writeDeleteRecorded(record: ContextRecord): Promise<{ blocks: number; entries: number }> {
    const executor = await this.ready();
    return runInTransaction(executor, () => deleteRecorded(postgresRecords(this.t), recordParams(record)));
  }

  protected async writeBlockIf(
    key: string,
    expected: string | null,
    next: string,
    record?: ContextRecord,
  ): Promise<boolean> {
    const owner = recordParams(record);
    const executor = await this.ready();
    // With a keyring, a sealed row's text differs at each write (a random nonce): it is compared opened, under
    // the row's lock (FOR UPDATE), in one transaction.
    if (this.t.keys) {
      return executor.transaction(async (query) => {
        const [row] = await query<BlockRow>(
          `SELECT content, content_json, sealed, session_id, owner FROM ${this.t.blocks} WHERE key = $1 FOR UPDATE`,
          [key],
        );
        const current = row ? await readBlockRow(query, this.t, key, row) : null;
        if (current !== expected) return false;
        // Sealed for the record the locked row keeps (a new row: this write's), guarded as writeBlock's. No row: a
        // concurrent insert of the key wins (this one then writes nothing), as below.
        return writeBlockRow(query, this.t, key, next, keptRecord(row, recordColumns(record)), !row);
      });
    }
    const stored = encodeContent(next);
    // One statement each, so the comparison and the write are atomic: a concurrent INSERT of the same key waits
    // for the first and then does nothing; a concurrent UPDATE waits and re-checks its WHERE on the new row.
    if (expected === null) {
      const rows = await executor.query<{ one: number }>(
        `INSERT INTO ${this.t.blocks} (key, content, content_json, updated_at, session_id, owner)
         VALUES ($1, $2, $3, now(), $4, $5) ON CONFLICT (key) DO NOTHING RETURNING 1 AS one`,
        [key, stored.content, stored.json, ...owner],
      );
      return rows.length === 1;
    }
    const old = encodeContent(expected);
    const rows = await executor.query<{ one: number }>(
      `UPDATE ${this.t.blocks} SET content = $2, content_json = $3, updated_at = now(),
         session_id = CASE WHEN session_id IS NULL AND owner IS NULL THEN $6::text ELSE session_id END,
         owner = CASE WHEN session_id IS NULL AND owner IS NULL THEN $7::text ELSE owner END
       WHERE key = $1 AND content = $4 AND content_json = $5 AND NOT sealed RETURNING 1 AS one`,
      [key, stored.content, stored.json, old.content, old.json, ...owner],
    );
    return rows.length === 1;
  }

  protected async writeDeleteBlocks(keys: string[]): Promise<void> {
    const executor = await this.ready();
    await executor.query(`DELETE FROM ${this.t.blocks} WHERE key = ANY($1::text[])`, [keys]);
  }
}

/** Keyed entries per label with full-text search in the library's query language. */
export class PostgresEntryStore extends StoreEntries {
  constructor(
    private readonly ready: Ready,
    private readonly t: KeyedTables,
    limits?: QueryLimits,
  ) {
    super(limits);
  }

  // `ready()` refuses with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected async writeEntry(
    label: string,
    key: string,
    content: string,
    record?: ContextRecord,
  ): Promise<void> {
    // Sealed, its search vector of the owner's blind tokens, when the owner of the record the row keeps has a key
    // (sealed-context.ts), its statement guarded as a message's (context-guard.ts): one statement unless the row
    // is recorded otherwise than this write.
    // A refused write's row is read under each key it was stored as (a digest under an owner's key, entry-keys.ts).
    const tried = new Set<string>();
    await guardedWrite(this.ready, this.t, (query) =>
      writeSealedRow(
        recordColumns(record),
        (kept) => writeEntryRow(query, this.t, label, key, content, kept, tried),
        async () =>
          (
            await query<RecordRow>(
              `SELECT session_id, owner FROM ${this.t.entries} WHERE label = $1 AND key = ANY($2::text[])
               ORDER BY key = $3 LIMIT 1`,
              [label, [...tried], key],
            )
          )[0],
      ),
    );
  }

  // One statement: each term's newest matches with their lengths, and the label's entry count. Each term also
  // matches as the label's owner's blind tokens when it has a key (with a keyring, the label's owner is read
  // first, and its key check unless this process has verified it).
  protected async readCandidates(
    label: string,
    terms: QueryTerm[],
    cap: number,
  ): Promise<EntryCandidates | undefined> {
    const clear = termTsqueries(terms);
    if (clear.numbers.length === 0) return undefined;
    const executor = await this.ready();
    const blinds = await labelBlinds(executor.query.bind(executor), this.t, label);
    const { numbers, queries } = blinds.length === 0 ? clear : termTsqueries(terms, blinds);
    const rows = await executor.query<{ i: number; seq: number; chars: number; n: number }>(
      `WITH terms(i, q) AS (SELECT * FROM unnest($1::integer[], $2::tsquery[]))
       SELECT t.i, c.seq::float8 AS seq, ${entryCharsSql("c")} AS chars,
         (SELECT count(*) FROM ${this.t.entries} WHERE label = $3)::float8 AS n
       FROM terms t CROSS JOIN LATERAL (
         SELECT seq, key, content, sealed_chars FROM ${this.t.entries} WHERE label = $3 AND search @@ t.q ORDER BY seq DESC LIMIT $4
       ) c`,
      [numbers, queries, label, cap],
    );
    if (rows.length === 0) return undefined;
    const matches: number[][] = terms.map(() => []);
    const lengths = new Map<number, number>();
    for (const row of rows) {
      matches[row.i]!.push(Number(row.seq));
      lengths.set(Number(row.seq), Number(row.chars));
    }
    for (const seqs of matches) seqs.sort((a, b) => b - a);
    return { matches, lengths, documents: Number(rows[0]!.n) };
  }

  protected async readEntries(label: string, seqs: number[]): Promise<Map<number, EntryHit>> {
    const executor = await this.ready();
    const query = executor.query.bind(executor);
    const found = await query<EntryRow & { seq: number }>(
      `SELECT seq::float8 AS seq, key, content, content_json, sealed_chars, session_id, owner FROM ${this.t.entries}
       WHERE seq = ANY($1::bigint[])`,
      [seqs],
    );
    const open = entryOpener(query, this.t, label);
    const hits = new Map<number, EntryHit>();
    for (const row of found) {
      const { key, content } = await open(row);
      hits.set(Number(row.seq), { key, content });
    }
    return hits;
  }

  protected async readCount(label: string): Promise<number> {
    const executor = await this.ready();
    const [row] = await executor.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${this.t.entries} WHERE label = $1`,
      [label],
    );
    return Number(row?.n ?? 0);
  }

  protected async writeDeleteEntries(label: string): Promise<void> {
    const executor = await this.ready();
    await executor.query(`DELETE FROM ${this.t.entries} WHERE label = $1`, [label]);
  }
}
