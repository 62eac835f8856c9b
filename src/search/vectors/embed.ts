import { sha256Base64url } from "../../runtime/bytes.js";
import { importOptional } from "../../runtime/load.js";
import type { Embedder, EmbeddingModelLike } from "./types.js";

/** An embedder reduced to one call shape: texts in, one unit vector per text out. */
export type EmbedFn = (texts: string[], signal?: AbortSignal) => Promise<Float32Array[]>;

type EmbedMany = (options: {
  model: unknown;
  values: string[];
  abortSignal?: AbortSignal;
}) => Promise<{ embeddings: number[][] }>;

/** True when `value` is an AI SDK embedding model rather than a function. */
export function isEmbeddingModel(value: unknown): value is EmbeddingModelLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<EmbeddingModelLike>).doEmbed === "function"
  );
}

/**
 * The embedder as an {@link EmbedFn}: an AI SDK model goes through `embedMany` from "ai" (imported on first use,
 * "npm install ai" when missing). Answers are checked (one finite vector per text, all of one size) and scaled to
 * unit length, so every backend ranks by cosine similarity with a dot product.
 */
export function embedFunction(embedder: Embedder): EmbedFn {
  let call: (texts: string[], signal?: AbortSignal) => Promise<unknown>;
  if (isEmbeddingModel(embedder)) {
    let embedMany: Promise<EmbedMany> | undefined;
    call = async (texts, signal) => {
      embedMany ??= importOptional<{ embedMany: EmbedMany }>("ai", "Embedding with an AI SDK model").then(
        (module) => module.embedMany,
      );
      const result = await (await embedMany)({
        model: embedder,
        values: texts,
        ...(signal ? { abortSignal: signal } : {}),
      });
      return result.embeddings;
    };
  } else {
    // Every call has a deadline (runtime/deadline.ts), so its signal is always there.
    call = async (texts, signal) => embedder(texts, { abortSignal: signal ?? new AbortController().signal });
  }
  return async (texts, signal) => checkVectors(await call(texts, signal), texts.length);
}

// Hand-written: it checks what the embedder answered, not a caller's input; its plain Error is an embedding failure.
function checkVectors(value: unknown, count: number): Float32Array[] {
  if (!Array.isArray(value) || value.length !== count) {
    throw new Error(`the embedder returned ${describeCount(value)} for ${count} texts`);
  }
  let size = -1;
  return value.map((vector: unknown, index) => {
    if (!Array.isArray(vector) && !(vector instanceof Float32Array) && !(vector instanceof Float64Array)) {
      throw new Error(`the embedder's vector ${index} is not an array of numbers`);
    }
    if (size === -1) size = vector.length;
    if (vector.length === 0 || vector.length !== size) {
      throw new Error(`the embedder returned vectors of different sizes (${size} and ${vector.length})`);
    }
    return unit(vector as ArrayLike<unknown>, index);
  });
}

function describeCount(value: unknown): string {
  return Array.isArray(value) ? `${value.length} vectors` : typeof value;
}

/** The vector scaled to length 1 (a zero vector stays zero: it matches nothing). */
export function unit(vector: ArrayLike<unknown>, index = 0): Float32Array {
  const out = new Float32Array(vector.length);
  let norm = 0;
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i];
    if (typeof x !== "number" || !Number.isFinite(x)) {
      throw new Error(`the embedder's vector ${index} holds ${String(x)} at ${i}`);
    }
    out[i] = x;
    norm += x * x;
  }
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * scale;
  }
  return out;
}

/**
 * UTF-8 bytes of a message embedded: a byte-level BPE tokenizer (OpenAI's) makes at most one token per byte, so
 * this stays under their 8,191-token input limit for any script, where 8,000 characters of CJK or emoji did not.
 */
export const MAX_EMBED_BYTES = 8_000;

/**
 * The part of `text` that is embedded: its first {@link MAX_EMBED_BYTES} UTF-8 bytes, cut between characters (the
 * rest is left to the text channel).
 */
export function embedText(text: string): string {
  // Three bytes at most per UTF-16 unit: a short text needs no count.
  if (text.length * 3 <= MAX_EMBED_BYTES) return text;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length;
    const next = pair ? text.charCodeAt(i + 1) : 0;
    const astral = pair && next >= 0xdc00 && next <= 0xdfff;
    const size = astral ? 4 : unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
    if (bytes + size > MAX_EMBED_BYTES) return text.slice(0, i);
    bytes += size;
    if (astral) i++;
  }
  return text;
}

/** The fingerprint of an embedded text: an update that keeps the text keeps its vector. */
export function textHash(text: string): string {
  return sha256Base64url(text);
}

/** A vector as the bytes of its float32 values (the BLOB of the plain SQLite table, sqlite-vec's input). */
export function vectorBytes(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

/** A vector back from its float32 bytes: a view where the driver's bytes are 4-aligned, else an aligned copy. */
export function bytesVector(bytes: Uint8Array | ArrayBuffer): Float32Array {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (view.byteOffset % 4 === 0) return new Float32Array(view.buffer, view.byteOffset, view.byteLength >> 2);
  const copy = new Uint8Array(view.byteLength - (view.byteLength % 4));
  copy.set(view.subarray(0, copy.byteLength));
  return new Float32Array(copy.buffer);
}
