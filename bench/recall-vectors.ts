/**
 * The recall bench's vector rows (recall.ts): for each local embedder that is installed, its nearest messages alone,
 * the text ranking fused with them, and with the recorded facts too (the facts in the vector channel as well, docs/
 * FACTS.md#recall). The embedders: the word vectors of BENCH_RECALL_WORD_VECTORS (word-vectors.ts) and the offline
 * sentence encoder of BENCH_RECALL_SENTENCE_ENCODER (sentence-encoder.ts). Memory and SQLite only.
 */
import { join } from "node:path";
import type { SessionStore } from "../src/contract/store.js";
import { MemoryStore } from "../src/memory/store.js";
import type { VectorChannel } from "../src/search/vectors/types.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Conversation, seedConversations } from "./locomo.js";
import { type Observations, seedWithFacts } from "./locomo-facts.js";
import { sentenceEncoderSource } from "./sentence-encoder.js";
import { wordVectorSource } from "./word-vectors.js";

type Embed = (texts: string[], options?: { abortSignal?: AbortSignal }) => Promise<number[][]>;
type VectorStore = SessionStore & { vectors?: VectorChannel | undefined };

/** A search under test (recall.ts's Asker): each result's turn ids. */
export interface VectorAsker {
  ask(conv: string, question: string): Promise<string[][]>;
  close(): Promise<void>;
}

/** What the rows need from recall.ts. */
export interface VectorRowsInput {
  data: Conversation[];
  backends: string[];
  observations: Observations[] | { skipped: string };
  /** A fresh directory for the SQLite files. */
  dir: string;
  progress: (msg: string) => void;
  /** Adds a sentence under the recall table (an embedder skipped, what embedding cost). */
  note: (text: string) => void;
  /** recall.ts's asker over a store: `facts` as a search takes it. */
  storeAsker: (store: SessionStore, facts: boolean) => VectorAsker;
}

/** One local embedder: its name in the rows, and how the bench gets it (a filling switch where it caches texts). */
interface Source {
  name: string;
  load: () => Promise<{ embed: Embed; filling?: (on: boolean) => void; encoded?: () => number }>;
}

function sources(note: (text: string) => void): Source[] {
  const found: Source[] = [];
  const words = wordVectorSource(process.env.BENCH_RECALL_WORD_VECTORS);
  if ("skipped" in words) note(words.skipped);
  else found.push({ name: "word vectors", load: async () => ({ embed: await words.load() }) });
  const encoder = sentenceEncoderSource(process.env.BENCH_RECALL_SENTENCE_ENCODER);
  if ("skipped" in encoder) note(encoder.skipped);
  else {
    found.push({
      name: "sentence encoder",
      load: async () => {
        const e = await encoder.load();
        return {
          embed: e.embed,
          filling: (on) => {
            e.caching = on;
          },
          encoded: () => e.cost.texts,
        };
      },
    });
  }
  return found;
}

// The store's vectors, all of them: a failure or a text left pending would make the row measure less than it says.
async function embedAll(store: VectorStore, name: string): Promise<void> {
  const done = await store.vectors!.backfill();
  const status = await store.vectors!.status();
  if (done.failed > 0 || status.pending > 0) {
    throw new Error(`${name}: ${done.failed} failed, ${status.pending} pending (${status.lastError})`);
  }
}

/** The vector rows' makers (label, asker); the embedders that are not installed are noted. */
export function vectorRows(input: VectorRowsInput): [string, () => Promise<VectorAsker>][] {
  const { data, dir, progress, observations } = input;
  const makers: [string, () => Promise<VectorAsker>][] = [];
  for (const source of sources(input.note)) {
    const file = (backend: string, what: string) =>
      join(dir, `${backend}-${source.name.replace(" ", "-")}-${what}.db`);
    const filled = async (
      row: string,
      fill: (embed: Embed) => Promise<VectorStore>,
    ): Promise<VectorStore> => {
      progress(`recall: loading the ${source.name}`);
      const loaded = await source.load();
      loaded.filling?.(true);
      const texts = loaded.encoded?.() ?? 0;
      const start = performance.now();
      const cpu = process.cpuUsage();
      try {
        const store = await fill(loaded.embed);
        await embedAll(store, source.name);
        if (loaded.encoded) {
          // The whole fill (appends and all) on the clock and in this process's CPU: embedding is most of it.
          const used = process.cpuUsage(cpu);
          input.note(
            `filling the store of "${row}": ${loaded.encoded() - texts} texts encoded ` +
              `(${((performance.now() - start) / 1000).toFixed(0)} s, CPU ${((used.user + used.system) / 1e6).toFixed(0)} s, ` +
              "appends included; a text encoded for an earlier row is not encoded again)",
          );
        }
        return store;
      } finally {
        loaded.filling?.(false);
      }
    };
    for (const backend of input.backends.filter((b) => b === "memory" || b === "sqlite")) {
      // The turns written without vectors, then embedded by backfill: what `agent-session embed` does.
      const turns = (what: string, row: string) =>
        filled(row, async (embedder) => {
          if (backend === "memory") {
            const store = new MemoryStore({ embedder });
            await seedConversations(store, data);
            return store;
          }
          const plain = new SqliteStore(file(backend, what));
          await seedConversations(plain, data);
          await plain.close();
          return new SqliteStore(file(backend, what), { embedder });
        });
      const alone = `agent-session ${backend}, ${source.name} alone (nearest messages)`;
      makers.push([
        alone,
        async () => {
          const store = await turns("alone", alone);
          return {
            ask: async (conv, question) => {
              const hits = await store.vectors!.nearestMessages(question, { sessionId: conv, limit: 20 });
              return hits.map((hit) => [hit.messageId]);
            },
            close: () => store.close(),
          };
        },
      ]);
      const fused = `agent-session ${backend}, ranked + ${source.name} (fused)`;
      makers.push([fused, async () => input.storeAsker(await turns("fused", fused), false)]);
      if ("skipped" in observations) continue;
      const withFacts = `agent-session ${backend}, ranked + recorded facts + ${source.name} (fused)`;
      makers.push([
        withFacts,
        async () => {
          const store = await filled(withFacts, async (embedder) => {
            const store =
              backend === "memory"
                ? new MemoryStore({ embedder })
                : new SqliteStore(file(backend, "facts"), { embedder });
            await seedWithFacts(store, data, observations);
            return store;
          });
          return input.storeAsker(store, true);
        },
      ]);
    }
  }
  return makers;
}
