/**
 * Embedding the facts without a vector (docs/FACTS.md#recall): what the vector channel's worker and backfill run,
 * kept out of channel.ts. Batches of FACT_BATCH read through the fact store's partial index of unembedded facts, so
 * a call with nothing waiting is one indexed read.
 */
import { embedText } from "./embed.js";
import type { FactVectorSource, FactVectorWrite } from "./fact-vectors.js";
import { embedIsolated, refusalReason } from "./isolate.js";

/** Facts embedded per batch. */
const FACT_BATCH = 64;

/** What embedding facts asks of the channel. */
export interface FactEmbedding {
  /** One embedder call, checked (its deadline, the store's size). */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Throws `CLOSED` once the store is closed. */
  check(): void;
  /** Reports a text the embedder refused. */
  report(error: unknown): void;
}

/**
 * Embeds every fact of `facts` without a vector, in batches: a sealed fact and an empty text get none, a text the
 * embedder refused by itself none either (reported); throws what stopped a batch (the worker retries). How many
 * facts were embedded.
 */
export async function embedFactRows(
  facts: FactVectorSource,
  how: FactEmbedding,
  signal: AbortSignal | undefined,
): Promise<number> {
  let embedded = 0;
  for (let after = 0; ; ) {
    signal?.throwIfAborted();
    how.check();
    const rows = await facts.unembedded(after, FACT_BATCH);
    if (rows.length === 0) return embedded;
    after = (rows[rows.length - 1] as { seq: number }).seq;
    const writes: FactVectorWrite[] = rows.map(({ seq }) => ({ seq, vector: null }));
    const texts: string[] = [];
    const at: number[] = [];
    rows.forEach((row, i) => {
      const text = embedText(row.text);
      if (text.trim() === "") return;
      at.push(i);
      texts.push(text);
    });
    const isolated = await embedIsolated(texts, (part) => how.embed(part));
    if (isolated.stopped !== undefined) throw isolated.stopped;
    at.forEach((i, j) => {
      (writes[i] as FactVectorWrite).vector = isolated.vectors[j] ?? null;
    });
    signal?.throwIfAborted();
    how.check();
    await facts.writeVectors(writes);
    embedded += writes.filter((w) => w.vector !== null).length;
    for (const [j, error] of isolated.refused) {
      const seq = (rows[at[j] as number] as { seq: number }).seq;
      how.report(
        new Error(`the embedder refused the text of fact row ${seq}: ${refusalReason(error)}`, {
          cause: error,
        }),
      );
    }
  }
}
