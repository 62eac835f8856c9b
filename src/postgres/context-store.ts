import { recordColumns } from "../context/records.js";
import { type EntryCandidates, StoreBlocks, StoreEntries } from "../context/store-base.js";
import type { ContextRecord, EntryHit } from "../contract/context.js";
import type { QueryLimits } from "../search/limits.js";
import type { QueryTerm } from "../search/query.js";
import type { Executor } from "./connection/client.js";
import { encodeContent } from "./connection/text.js";
import { deleteRecorded, keepRecord, RECORDED, recordParams } from "./context-records.js";
import type { Tables } from "./schema.js";
import {
  type BlockRow,
  type EntryRow,
  entryOpener,
  keptGuard,
  keptRecord,
  labelBlinds,
  type RecordRow,
  readBlockRow,
  storedBlock,
  storedEntry,
  writeSealedRow,
} from "./sealed-context.js";
import { termTsqueries } from "./search/fts.js";

type Ready = () => Promise<Executor>;

// `$5`, `$6`: the record's session id and owner (context-records.ts), kept when the row has one.
const UPSERT_BLOCK = (
  t: Tables,
) => `INSERT INTO ${t.blocks} AS b (key, content, content_json, sealed, updated_at,
    session_id, owner)
  VALUES ($1, $2, $3, $4, now(), $5, $6)
  ON CONFLICT (key) DO UPDATE SET content = EXCLUDED.content, content_json = EXCLUDED.content_json,
    sealed = EXCLUDED.sealed, updated_at = EXCLUDED.updated_at, ${keepRecord("b")}`;
// As UPSERT_BLOCK, writing only over a row unrecorded or recorded as `$5`, `$6` (sealed-context.ts keptGuard).
const UPSERT_KEPT_BLOCK = (t: Tables) =>
  `${UPSERT_BLOCK(t)} WHERE ${keptGuard("b", "$5", "$6")} RETURNING 1 AS one`;
const INSERT_ABSENT_BLOCK = (
  t: Tables,
) => `INSERT INTO ${t.blocks} (key, content, content_json, sealed, updated_at, session_id, owner)
  VALUES ($1, $2, $3, $4, now(), $5, $6) ON CONFLICT (key) DO NOTHING`;

/** Key/value rows for context blocks and cached prompts. */
export class PostgresBlockStore extends StoreBlocks {
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
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
    const executor = await this.ready();
    const query = executor.query.bind(executor);
    // Sealed when the owner of the record the row keeps has a key (sealed-context.ts): one statement unless the
    // row is recorded otherwise than this write.
    await writeSealedRow(
      recordColumns(record),
      async (kept) => {
        const stored = await storedBlock(query, this.t, key, content, kept);
        const written = await query(UPSERT_KEPT_BLOCK(this.t), [
          key,
          stored.content,
          stored.json,
          stored.sealed,
          kept.sessionId,
          kept.owner,
        ]);
        return written.length === 1;
      },
      async () =>
        (await query<RecordRow>(`SELECT session_id, owner FROM ${this.t.blocks} WHERE key = $1`, [key]))[0],
    );
  }

  protected async readRecordedKeys(record: ContextRecord): Promise<string[]> {
    const executor = await this.ready();
    const rows = await executor.query<{ key: string }>(
      `SELECT key FROM ${this.t.blocks} WHERE ${RECORDED} ORDER BY key COLLATE "C"`,
      recordParams(record),
    );
    return rows.map((row) => row.key);
  }

  protected async writeDeleteRecorded(record: ContextRecord): Promise<{ blocks: number; entries: number }> {
    const executor = await this.ready();
    return executor.transaction((query) => deleteRecorded(query, this.t, record));
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
        // Sealed for the record the locked row keeps (a new row: this write's).
        const stored = await storedBlock(query, this.t, key, next, keptRecord(row, recordColumns(record)));
        // No row: a concurrent insert of the key wins (this one then writes nothing), as below.
        const write = row ? UPSERT_BLOCK(this.t) : INSERT_ABSENT_BLOCK(this.t);
        const written = await query(`${write} RETURNING 1 AS one`, [
          key,
          stored.content,
          stored.json,
          stored.sealed,
          ...owner,
        ]);
        return written.length === 1;
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
    private readonly t: Tables,
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
    const executor = await this.ready();
    const query = executor.query.bind(executor);
    // Sealed, its search vector of the owner's blind tokens, when the owner of the record the row keeps has a key
    // (sealed-context.ts): one statement unless the row is recorded otherwise than this write.
    // A replaced entry takes a new seq, so it counts as the newest for the bounded ranking window. The search
    // vector is built from the text itself, never from its stored form. The time is the column's default (now())
    // taken through EXCLUDED: Citus refuses a non-immutable function in DO UPDATE SET.
    await writeSealedRow(
      recordColumns(record),
      async (kept) => {
        const stored = await storedEntry(query, this.t, label, key, content, kept);
        const written = await query(
          `INSERT INTO ${this.t.entries} AS e (label, key, content, content_json, sealed_chars, search, session_id, owner)
           VALUES ($1, $2, $3, $4, $5, $6::tsvector, $7, $8)
           ON CONFLICT (label, key) DO UPDATE SET content = EXCLUDED.content, content_json = EXCLUDED.content_json,
             sealed_chars = EXCLUDED.sealed_chars, search = EXCLUDED.search, seq = EXCLUDED.seq,
             updated_at = EXCLUDED.updated_at, ${keepRecord("e")}
           WHERE ${keptGuard("e", "$7", "$8")} RETURNING 1 AS one`,
          [
            label,
            key,
            stored.content,
            stored.json,
            stored.sealedChars,
            stored.search,
            kept.sessionId,
            kept.owner,
          ],
        );
        return written.length === 1;
      },
      async () =>
        (
          await query<RecordRow>(
            `SELECT session_id, owner FROM ${this.t.entries} WHERE label = $1 AND key = $2`,
            [label, key],
          )
        )[0],
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
       SELECT t.i, c.seq::float8 AS seq, length(c.key) + COALESCE(c.sealed_chars, length(c.content)) AS chars,
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
    for (const row of found) hits.set(Number(row.seq), { key: row.key, content: await open(row) });
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
