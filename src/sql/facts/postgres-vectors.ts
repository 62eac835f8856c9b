/**
 * Facts' vectors on Postgres and PGlite (search/vectors/fact-vectors.ts): a float4[] in the fact's own row
 * (`embedding`, added by a store with an embedder; an empty array: the fact gets none), so every statement that
 * deletes a fact deletes its vector, and on Citus it lives in the fact's shard (distributed by `scope`). A scope's
 * facts are scored exactly in SQL by a dot product (unit vectors), newest first up to FACT_VECTOR_SCAN: pgvector's
 * index holds the messages' vectors only.
 */
import {
  FACT_VECTOR_SCAN,
  type FactVectorCounts,
  type FactVectorRows,
  type FactVectorWrite,
  type UnembeddedFact,
} from "../../search/vectors/fact-vectors.js";
import { type FactFilter, factSearchText } from "../../store/facts.js";
import type { Executor } from "../engines/postgres/client.js";
import { quote, type Tables } from "../engines/postgres/tables.js";
import { factTables, sourcedSql } from "./postgres.js";

/** The column of a fact's vector and the index of the facts still to embed: made by a store with an embedder. */
export function factVectorColumnSql(t: Tables): string[] {
  const { facts } = factTables(t);
  return [
    `ALTER TABLE ${facts} ADD COLUMN IF NOT EXISTS embedding float4[]`,
    `CREATE INDEX IF NOT EXISTS ${quote(`${t.prefix}agent_facts_unembedded`)} ON ${facts} (seq) WHERE embedding IS NULL`,
  ];
}

/** The facts' vectors of one Postgres store. */
export class PostgresFactVectors implements FactVectorRows {
  private ensured: Promise<void> | undefined;
  /** The scope of each fact handed out to embed (a write names the shard key). */
  private readonly scopes = new Map<number, string>();

  constructor(
    private readonly ready: () => Promise<Executor>,
    private readonly t: Tables,
  ) {}

  private async executor(): Promise<Executor> {
    const executor = await this.ready();
    if (!this.ensured) {
      const ensured = (async () => {
        for (const sql of factVectorColumnSql(this.t)) await executor.query(sql);
      })();
      this.ensured = ensured;
      ensured.catch(() => {
        if (this.ensured === ensured) this.ensured = undefined;
      });
    }
    await this.ensured;
    return executor;
  }

  /** Facts without a vector after `after`, oldest first; a sealed one's text is "" (it gets none). */
  async unembedded(after: number, limit: number): Promise<UnembeddedFact[]> {
    const executor = await this.executor();
    const rows = await executor.query<{
      seq: string | number;
      scope: string;
      text: string;
      about: string | null;
      sealed: boolean;
    }>(
      `SELECT seq, scope, text, about, sealed_chars IS NOT NULL AS sealed FROM ${factTables(this.t).facts}
       WHERE embedding IS NULL AND seq > $1 ORDER BY seq LIMIT $2`,
      [after, limit],
    );
    return rows.map((row) => {
      const seq = Number(row.seq);
      this.scopes.set(seq, row.scope);
      return { seq, text: row.sealed ? "" : factSearchText(row) };
    });
  }

  /** Stores vectors (a fact deleted meanwhile: no row, no write); never a vector over a sealed fact's row. */
  async write(rows: readonly FactVectorWrite[]): Promise<void> {
    const executor = await this.executor();
    const { facts } = factTables(this.t);
    for (const { seq, vector } of rows) {
      const scope = this.scopes.get(seq);
      this.scopes.delete(seq);
      if (scope === undefined) continue;
      await executor.query(
        `UPDATE ${facts} SET embedding = CASE WHEN sealed_chars IS NULL THEN $3::float4[] ELSE '{}'::float4[] END
         WHERE scope = $1 AND seq = $2`,
        [scope, seq, vector === null ? [] : Array.from(vector)],
      );
    }
  }

  /** Every fact is to embed again (a new embedding model). */
  async forget(): Promise<void> {
    const executor = await this.executor();
    await executor.query(
      `UPDATE ${factTables(this.t).facts} SET embedding = NULL WHERE embedding IS NOT NULL`,
    );
  }

  /** Refused texts wait again: the marker on a clear fact (a sealed fact's marker is no refusal). */
  async retry(): Promise<void> {
    const executor = await this.executor();
    await executor.query(
      `UPDATE ${factTables(this.t).facts} SET embedding = NULL
       WHERE cardinality(embedding) = 0 AND sealed_chars IS NULL`,
    );
  }

  /** Held (a vector, or a sealed fact's marker), waiting, refused (the marker on a clear fact: its text was refused). */
  async counts(): Promise<FactVectorCounts> {
    const executor = await this.executor();
    const [row] = await executor.query<{
      total: string | number;
      pending: string | number;
      failed: string | number;
    }>(
      `SELECT count(*) AS total, count(*) FILTER (WHERE embedding IS NULL) AS pending,
         count(*) FILTER (WHERE cardinality(embedding) = 0 AND sealed_chars IS NULL) AS failed
       FROM ${factTables(this.t).facts}`,
    );
    const pending = Number(row?.pending ?? 0);
    const failed = Number(row?.failed ?? 0);
    return { embedded: Number(row?.total ?? 0) - pending - failed, pending, failed };
  }

  /** The scope's facts passing `filter` nearest to `query`, best first, at most `limit`. */
  async nearest(
    scope: string,
    query: Float32Array,
    filter: FactFilter,
    limit: number,
  ): Promise<{ seq: number; score: number }[]> {
    const executor = await this.executor();
    const { facts, sources } = factTables(this.t);
    const rows = await executor.query<{ seq: string | number; score: number }>(
      `SELECT c.seq, (SELECT sum(a * b) FROM unnest(c.embedding, $2::float4[]) AS x(a, b))::float8 AS score
       FROM (
         SELECT f.seq, f.embedding FROM ${facts} f
         WHERE f.scope = $1 AND f.status = ANY($3::text[]) AND cardinality(f.embedding) = $4
           AND f.sealed_chars IS NULL AND ${sourcedSql(sources, "$1", "$5", "$6")}
         ORDER BY f.seq DESC LIMIT ${FACT_VECTOR_SCAN}
       ) c ORDER BY score DESC, c.seq DESC LIMIT $7`,
      [
        scope,
        Array.from(query),
        filter.status,
        query.length,
        filter.sourcesIn ?? null,
        filter.sourceSession ?? null,
        limit,
      ],
    );
    return rows.map((row) => ({ seq: Number(row.seq), score: Number(row.score) }));
  }
}
