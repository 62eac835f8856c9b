/**
 * What both engines' vector backends share (sqlite.ts, postgres.ts): the channel made over an engine's backend, and
 * the status counted from the rows each engine reads in its own statement.
 */
import { StoreVectors } from "../../search/vectors/channel.js";
import type { Embedder, VectorBackend, VectorStoreOptions } from "../../search/vectors/types.js";
import type { ChangeFeed } from "../../store/feed/feed.js";

/** The vector channel of a SQL store opened with an `embedder`, over the engine's backend (`plainOnly`: no index). */
export function sqlVectors(
  store: { readonly feed: ChangeFeed },
  options: VectorStoreOptions & { embedder: Embedder },
  backend: (plainOnly: boolean) => VectorBackend,
): StoreVectors {
  return new StoreVectors(backend(options.vectorIndex === "plain"), options, store.feed);
}

/**
 * Messages with a current vector, with a current refusal, and the rest (pending), from the messages' count
 * (`total`), the current vector rows' (`current`, refusals included) and the refusals'.
 */
export function vectorStatus(
  total: number,
  current: number,
  failed: number,
): { embedded: number; pending: number; failed: number } {
  const embedded = current - failed;
  return { embedded, pending: total - embedded - failed, failed };
}
