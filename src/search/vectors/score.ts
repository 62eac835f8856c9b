/**
 * Brute-force scoring shared by the backends without a vector index (memory, the plain SQLite and Postgres
 * tables): cosine similarity of unit vectors is their dot product, and only the best `limit` are kept.
 */

/**
 * Vectors a plain table scores per query: the newest this many of the scope (one session, a set, or the store)
 * that pass a search's role and time filters (sqlite-vec too, when too few of its nearest pass them). Bounds a
 * query's cost whatever the store's size: with 384-dimensional vectors some 50–70 ms on SQLite (reading the BLOBs
 * is most of it) and 180–230 ms on Postgres (dot products in SQL), over two runs in docs/RECALL.md, "Hybrid recall".
 */
export const PLAIN_VECTOR_CANDIDATES = 5_000;

/** Dot product of two vectors of one size. */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** Keeps the `limit` highest-scoring seqs seen, ties to the newer (higher) seq. */
export class TopK {
  private readonly items: { seq: number; score: number }[] = [];

  constructor(private readonly limit: number) {}

  /** Offers one candidate. */
  add(seq: number, score: number): void {
    if (this.limit <= 0 || Number.isNaN(score)) return;
    const items = this.items;
    if (items.length === this.limit) {
      const worst = items[items.length - 1] as { seq: number; score: number };
      if (score < worst.score || (score === worst.score && seq < worst.seq)) return;
      items.pop();
    }
    // Insertion into a sorted array: limits are small (tens), so this beats a heap.
    let i = items.length;
    while (i > 0) {
      const before = items[i - 1] as { seq: number; score: number };
      if (before.score > score || (before.score === score && before.seq > seq)) break;
      i--;
    }
    items.splice(i, 0, { seq, score });
  }

  /** The kept seqs with their scores, best first. */
  entries(): { seq: number; score: number }[] {
    return this.items.map((item) => ({ ...item }));
  }

  /** The kept seqs, best first. */
  seqs(): number[] {
    return this.items.map((item) => item.seq);
  }
}
