/**
 * Facts' vectors on SQLite (search/vectors/fact-vectors.ts): a float32 BLOB in the fact's own row (`embedding`, added
 * by a store with an embedder; an empty BLOB: the fact gets none), so every statement that deletes a fact deletes
 * its vector. A scope's facts are scored exactly, newest first up to FACT_VECTOR_SCAN, in JavaScript (the message
 * vectors' sqlite-vec index holds messages only: a scope's facts are few, and a scan of them is what a filtered
 * nearest read of them costs anyway).
 */
import { bytesVector, vectorBytes } from "../../search/vectors/embed.js";
import {
  FACT_VECTOR_SCAN,
  type FactVectorCounts,
  type FactVectorRows,
  type FactVectorWrite,
  type UnembeddedFact,
} from "../../search/vectors/fact-vectors.js";
import { dot, TopK } from "../../search/vectors/score.js";
import { type FactFilter, factSearchText } from "../../store/facts.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { sourcedSql } from "./sqlite.js";

/**
 * The column of a fact's vector and the index of the facts still to embed (only those, so the worker's read is
 * bounded by its work, not by the facts): made by the first use of a store with an embedder.
 */
export function addFactVectorColumn(driver: SqlDriver): void {
  const columns = driver.column<string>("SELECT name FROM pragma_table_info('agent_facts')");
  if (!columns.includes("embedding")) driver.run("ALTER TABLE agent_facts ADD COLUMN embedding BLOB");
  driver.run("CREATE INDEX IF NOT EXISTS agent_facts_unembedded ON agent_facts(seq) WHERE embedding IS NULL");
}

const NONE = new Uint8Array(0);

/** The facts' vectors of one SQLite connection. */
export class SqliteFactVectors implements FactVectorRows {
  private ready = false;

  constructor(private readonly driver: SqlDriver) {}

  private ensure(): SqlDriver {
    if (!this.ready) {
      addFactVectorColumn(this.driver);
      this.ready = true;
    }
    return this.driver;
  }

  /** Facts without a vector, oldest first; a sealed one's text is "" (an encrypted owner's fact gets none). */
  unembedded(after: number, limit: number): UnembeddedFact[] {
    const rows = this.ensure().tuples<[number, string, string | null, number | null]>(
      `SELECT seq, text, about, sealed_chars FROM agent_facts INDEXED BY agent_facts_unembedded
       WHERE embedding IS NULL AND seq > ? ORDER BY seq LIMIT ?`,
      [after, limit],
    );
    return rows.map(([seq, text, about, sealed]) => ({
      seq,
      text: sealed === null ? factSearchText({ text, about }) : "",
    }));
  }

  /** Stores vectors (a fact deleted meanwhile: no row, no write), in one transaction. */
  write(rows: readonly FactVectorWrite[]): void {
    const driver = this.ensure();
    driver.transaction(() => {
      for (const { seq, vector } of rows) {
        // A vector never over a sealed fact's row (its owner got a key since its text was read): the marker.
        driver.run(
          "UPDATE agent_facts SET embedding = CASE WHEN sealed_chars IS NULL THEN ? ELSE ? END WHERE seq = ?",
          [vector === null ? NONE : vectorBytes(vector), NONE, seq],
        );
      }
    });
  }

  /** Every fact is to embed again (a new embedding model). */
  forget(): void {
    this.ensure().run("UPDATE agent_facts SET embedding = NULL WHERE embedding IS NOT NULL");
  }

  /** Refused texts wait again: the marker on a clear fact (a sealed fact's marker is no refusal). */
  retry(): void {
    this.ensure().run(
      "UPDATE agent_facts SET embedding = NULL WHERE length(embedding) = 0 AND sealed_chars IS NULL",
    );
  }

  /** Held (a vector, or a sealed fact's marker), waiting, refused (the marker on a clear fact: its text was refused). */
  counts(): FactVectorCounts {
    const [all, pending, failed] = this.ensure().tuples<[number, number | null, number | null]>(
      `SELECT count(*), sum(embedding IS NULL), sum(length(embedding) = 0 AND sealed_chars IS NULL) FROM agent_facts`,
    )[0] ?? [0, 0, 0];
    return { embedded: all - (pending ?? 0) - (failed ?? 0), pending: pending ?? 0, failed: failed ?? 0 };
  }

  /** The scope's facts passing `filter` nearest to `query`, best first, at most `limit`. */
  nearest(
    scope: string,
    query: Float32Array,
    filter: FactFilter,
    limit: number,
  ): { seq: number; score: number }[] {
    const sourced = sourcedSql("a", filter);
    const rows = this.ensure().tuples<[number, Uint8Array]>(
      `SELECT a.seq, a.embedding FROM agent_facts a
       WHERE a.scope = ? AND a.status IN (SELECT value FROM json_each(?)) AND length(a.embedding) > 0
       AND a.sealed_chars IS NULL${sourced.sql} ORDER BY a.seq DESC LIMIT ?`,
      [scope, JSON.stringify(filter.status), ...sourced.params, FACT_VECTOR_SCAN],
    );
    const top = new TopK(limit);
    for (const [seq, bytes] of rows) {
      const vector = bytesVector(bytes);
      if (vector.length === query.length) top.add(seq, dot(vector, query));
    }
    return top.entries();
  }
}
