/**
 * Mastra's semantic recall through our search (docs/MASTRA.md, "Semantic recall"): Memory recalls by embedding the
 * user's words and asking a vector store for the nearest messages. Here the "embedder" answers the words themselves
 * (their code points as the vector) and the vector store answers a query by running the store's own ranked recall
 * (`searchMessages`, with the store's vector channel when it has one) on those words, within the resource or thread
 * Memory names. Messages need no upsert: the store indexes every message it keeps.
 */
import {
  MastraVector,
  type QueryResult,
  type QueryVectorParams,
  type UpsertVectorParams,
  type VectorFilter,
} from "@mastra/core/vector";
import type { SearchHit, StoreSearchOptions } from "../contract/search.js";

/** A store that searches its messages (a SqliteStore or a PostgresStore). */
export interface SearchableStore {
  searchMessages(query: string, options?: StoreSearchOptions): Promise<SearchHit[]>;
}

/** The "vector" of some words: their code points, so a query carries its words to the search, with no state kept. */
const encode = (text: string): number[] =>
  text === "" ? [32] : Array.from(text, (ch) => ch.codePointAt(0) ?? 32);

// The words of a vector `encode` made (undefined: not one).
function decode(vector: readonly number[] | undefined): string | undefined {
  if (!vector || vector.length === 0 || !vector.every((n) => Number.isInteger(n) && n >= 0 && n <= 0x10ffff))
    return undefined;
  return String.fromCodePoint(...vector);
}

type Filter = Record<string, unknown>;

// The resource and thread a Memory filter names (`{ resource_id }`, `{ thread_id }`, or either inside `$and`).
function scopeOf(filter: Filter | undefined, scope: { owner?: string; sessionId?: string } = {}) {
  if (!filter) return scope;
  if (typeof filter.resource_id === "string") scope.owner = filter.resource_id;
  if (typeof filter.thread_id === "string") scope.sessionId = filter.thread_id;
  if (Array.isArray(filter.$and)) for (const part of filter.$and) scopeOf(part as Filter, scope);
  return scope;
}

/** A `MastraVector` whose queries are the store's ranked recall over the words the paired embedder encoded. */
export class AgentSessionVector extends MastraVector {
  constructor(private readonly store: SearchableStore) {
    super({ id: "agent-session-recall" });
  }

  async query(params: QueryVectorParams): Promise<QueryResult[]> {
    const words = decode(params.queryVector);
    if (words === undefined || words.trim() === "") return [];
    const { owner, sessionId } = scopeOf(params.filter as Filter | undefined);
    // A query names its resource or its thread: a search of the whole store is never run for Memory.
    if (owner === undefined && sessionId === undefined) return [];
    const options: StoreSearchOptions = { limit: params.topK ?? 4 };
    if (owner !== undefined) options.owner = owner;
    if (sessionId !== undefined) options.sessionId = sessionId;
    const hits = await this.store.searchMessages(words, options);
    return hits.map((hit) => ({
      id: hit.id,
      score: hit.score,
      metadata: { message_id: hit.id, thread_id: hit.sessionId, ...(owner ? { resource_id: owner } : {}) },
    }));
  }

  // The store indexes its messages itself: Memory's vectors are not kept.
  async upsert(params: UpsertVectorParams<VectorFilter>): Promise<string[]> {
    return params.ids ?? params.vectors.map((_, i) => String(i));
  }
  async createIndex(): Promise<void> {}
  async listIndexes(): Promise<string[]> {
    return [];
  }
  async describeIndex() {
    return { dimension: 1, count: 0, metric: "cosine" as const };
  }
  async deleteIndex(): Promise<void> {}
  async updateVector(): Promise<void> {}
  async deleteVector(): Promise<void> {}
  async deleteVectors(): Promise<void> {}
}

/**
 * What `new Memory({ vector, embedder, options: { semanticRecall } })` takes to recall through the store's search:
 * `vector` and `embedder` work as a pair.
 */
export function searchRecall(store: SearchableStore) {
  const embedder = {
    specificationVersion: "v3" as const,
    provider: "agent-session",
    modelId: "search",
    maxEmbeddingsPerCall: 256,
    supportsParallelCalls: true,
    async doEmbed({ values }: { values: string[] }) {
      return { embeddings: values.map(encode), warnings: [] };
    },
  };
  return { vector: new AgentSessionVector(store), embedder };
}
