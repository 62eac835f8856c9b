import { DEFAULT_QUERY_LIMITS, type QueryLimits } from "../search/limits.js";
import { perTermCap, rankEntries, recallTerms } from "../search/rank.js";
import { entryText } from "../search/tokens.js";
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
import type { Executor } from "./connection/client.js";
import { decodeContent, encodeContent } from "./connection/text.js";
import type { Tables } from "./schema.js";
import { termTsqueries, toTsvector } from "./search/fts.js";

type Ready = () => Promise<Executor>;

interface ContentRow {
  content: string;
  content_json: boolean;
}

/** Key/value rows for context blocks and cached prompts. */
export class PostgresBlockStore implements BlockStore {
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
  ) {}

  async getBlock(key: string): Promise<string | null> {
    if (!isBlockKey(key)) return null;
    const executor = await this.ready();
    const [row] = await executor.query<ContentRow>(
      `SELECT content, content_json FROM ${this.t.blocks} WHERE key = $1`,
      [key],
    );
    return row ? decodeContent(row.content, row.content_json) : null;
  }

  async setBlock(key: string, content: string): Promise<void> {
    assertBlockKey(key);
    assertContent(content);
    const stored = encodeContent(content);
    const executor = await this.ready();
    await executor.query(
      `INSERT INTO ${this.t.blocks} (key, content, content_json, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (key) DO UPDATE SET content = EXCLUDED.content, content_json = EXCLUDED.content_json,
         updated_at = EXCLUDED.updated_at`,
      [key, stored.content, stored.json],
    );
  }

  async deleteBlocks(keys: readonly string[]): Promise<void> {
    const known = lookupKeys(keys);
    if (known.length === 0) return;
    const executor = await this.ready();
    await executor.query(`DELETE FROM ${this.t.blocks} WHERE key = ANY($1::text[])`, [known]);
  }
}

/** Keyed entries per label with full-text search in the library's query language. */
export class PostgresEntryStore implements EntryStore {
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
    private readonly limits: QueryLimits = DEFAULT_QUERY_LIMITS,
  ) {}

  async setEntry(label: string, key: string, content: string): Promise<void> {
    assertStoredKey(label, "A label");
    assertStoredKey(key, "An entry key");
    assertContent(content);
    const stored = encodeContent(content);
    const executor = await this.ready();
    // A replaced entry takes a new seq, so it counts as the newest for the bounded ranking window. The search
    // vector is built from the text itself, never from its stored form.
    await executor.query(
      `INSERT INTO ${this.t.entries} (label, key, content, content_json, search) VALUES ($1, $2, $3, $4, $5::tsvector)
       ON CONFLICT (label, key) DO UPDATE SET content = EXCLUDED.content, content_json = EXCLUDED.content_json,
         search = EXCLUDED.search, seq = EXCLUDED.seq, updated_at = now()`,
      [label, key, stored.content, stored.json, toTsvector(entryText(key, content))],
    );
  }

  async searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]> {
    const max = searchLimit(limit ?? 10);
    // Parsed (and so bounded) first, as on every backend: a query over the limits is refused even with limit 0.
    // Ranked recall, as message search: any content word makes a candidate, more of them rank first.
    const terms = typeof query === "string" ? recallTerms(query, this.limits) : [];
    if (max === 0 || !isLookupKey(label)) return [];
    const { numbers, queries } = termTsqueries(terms);
    if (numbers.length === 0) return [];
    const executor = await this.ready();
    const cap = perTermCap(terms.length, SEARCH_CANDIDATES);
    const rows = await executor.query<{ i: number; seq: number; chars: number; n: number }>(
      `WITH terms(i, q) AS (SELECT * FROM unnest($1::integer[], $2::tsquery[]))
       SELECT t.i, c.seq::float8 AS seq, length(c.key) + length(c.content) AS chars,
         (SELECT count(*) FROM ${this.t.entries} WHERE label = $3)::float8 AS n
       FROM terms t CROSS JOIN LATERAL (
         SELECT seq, key, content FROM ${this.t.entries} WHERE label = $3 AND search @@ t.q ORDER BY seq DESC LIMIT $4
       ) c`,
      [numbers, queries, label, cap],
    );
    if (rows.length === 0) return [];
    const matches: number[][] = terms.map(() => []);
    const lengths = new Map<number, number>();
    for (const row of rows) {
      matches[row.i]!.push(Number(row.seq));
      lengths.set(Number(row.seq), Number(row.chars));
    }
    for (const seqs of matches) seqs.sort((a, b) => b - a);
    const top = rankEntries(matches, (seq) => lengths.get(seq), Number(rows[0]!.n)).slice(0, max);
    const found = await executor.query<ContentRow & { key: string; seq: number }>(
      `SELECT seq::float8 AS seq, key, content, content_json FROM ${this.t.entries} WHERE seq = ANY($1::bigint[])`,
      [top],
    );
    const bySeq = new Map(found.map((row) => [Number(row.seq), row]));
    return top.flatMap((seq) => {
      const row = bySeq.get(seq);
      return row === undefined
        ? []
        : [{ key: row.key, content: decodeContent(row.content, row.content_json) }];
    });
  }

  async countEntries(label: string): Promise<number> {
    if (!isLookupKey(label)) return 0;
    const executor = await this.ready();
    const [row] = await executor.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${this.t.entries} WHERE label = $1`,
      [label],
    );
    return Number(row?.n ?? 0);
  }

  async deleteEntries(label: string): Promise<void> {
    if (!isLookupKey(label)) return;
    const executor = await this.ready();
    await executor.query(`DELETE FROM ${this.t.entries} WHERE label = $1`, [label]);
  }
}
