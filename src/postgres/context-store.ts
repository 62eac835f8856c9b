/** Context blocks and searchable keyed entries on Postgres (the reference's two context tables). */
import { SessionError } from "../errors.js";
import { parseQuery } from "../search/query.js";
import { SEARCH_CANDIDATES, searchLimit } from "../store/limits.js";
import type { BlockStore, EntryHit, EntryStore } from "../store/types.js";
import type { Executor } from "./client.js";
import { toTsquery, toTsvector } from "./fts.js";
import type { Tables } from "./schema.js";

type Ready = () => Promise<Executor>;

function assertKey(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string" || value.length === 0) {
    throw new SessionError("INVALID_ARGUMENT", `${what} must be a non-empty string`);
  }
}

function assertContent(value: unknown): asserts value is string {
  if (typeof value !== "string") throw new SessionError("INVALID_ARGUMENT", "Content must be a string");
}

// Postgres text cannot hold U+0000; blocks and entries are plain text, so it is dropped rather than refused.
function storable(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "") : text;
}

/** Key/value rows for context blocks and cached prompts. */
export class PostgresBlockStore implements BlockStore {
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
  ) {}

  async getBlock(key: string): Promise<string | null> {
    assertKey(key, "A block key");
    const executor = await this.ready();
    const [row] = await executor.query<{ content: string }>(
      `SELECT content FROM ${this.t.blocks} WHERE key = $1`,
      [key],
    );
    return row ? row.content : null;
  }

  async setBlock(key: string, content: string): Promise<void> {
    assertKey(key, "A block key");
    assertContent(content);
    const executor = await this.ready();
    await executor.query(
      `INSERT INTO ${this.t.blocks} (key, content, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (key) DO UPDATE SET content = EXCLUDED.content, updated_at = EXCLUDED.updated_at`,
      [key, storable(content)],
    );
  }

  async deleteBlocks(keys: readonly string[]): Promise<void> {
    if (!Array.isArray(keys))
      throw new SessionError("INVALID_ARGUMENT", "deleteBlocks expects an array of keys");
    if (keys.length === 0) return;
    const executor = await this.ready();
    await executor.query(`DELETE FROM ${this.t.blocks} WHERE key = ANY($1::text[])`, [keys]);
  }
}

/** Keyed entries per label with full-text search in the library's query language. */
export class PostgresEntryStore implements EntryStore {
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
  ) {}

  async setEntry(label: string, key: string, content: string): Promise<void> {
    assertKey(label, "A label");
    assertKey(key, "An entry key");
    assertContent(content);
    const executor = await this.ready();
    // A replaced entry takes a new seq, so it counts as the newest for the bounded ranking window.
    await executor.query(
      `INSERT INTO ${this.t.entries} (label, key, content, search) VALUES ($1, $2, $3, $4::tsvector)
       ON CONFLICT (label, key) DO UPDATE SET content = EXCLUDED.content, search = EXCLUDED.search,
         seq = EXCLUDED.seq, updated_at = now()`,
      [label, key, storable(content), toTsvector(content)],
    );
  }

  async searchEntries(label: string, query: string, limit?: number): Promise<EntryHit[]> {
    assertKey(label, "A label");
    const max = searchLimit(limit);
    if (typeof query !== "string" || max === 0) return [];
    const tsquery = toTsquery(parseQuery(query));
    if (tsquery === null) return [];
    const executor = await this.ready();
    return executor.query<EntryHit>(
      `SELECT key, content FROM (
         SELECT key, content, seq, search FROM ${this.t.entries} WHERE label = $1 AND search @@ $2::tsquery
         ORDER BY seq DESC LIMIT ${SEARCH_CANDIDATES}
       ) c ORDER BY ts_rank(search, $2::tsquery) DESC, seq DESC LIMIT $3`,
      [label, tsquery, max],
    );
  }

  async countEntries(label: string): Promise<number> {
    assertKey(label, "A label");
    const executor = await this.ready();
    const [row] = await executor.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM ${this.t.entries} WHERE label = $1`,
      [label],
    );
    return Number(row?.n ?? 0);
  }

  async deleteEntries(label: string): Promise<void> {
    assertKey(label, "A label");
    const executor = await this.ready();
    await executor.query(`DELETE FROM ${this.t.entries} WHERE label = $1`, [label]);
  }
}
