// The seeded corpus of the differential search tests: the same writes and queries for every backend, so their
// answers can be compared line by line (test/search-differential*.test.ts).
import assert from "node:assert/strict";
import type { PGlite } from "@electric-sql/pglite";
import { hasContextStorage } from "../../src/contract/context.js";
import type { SessionMessage } from "../../src/contract/message.js";
import type { SessionStore } from "../../src/contract/store.js";
import { MemoryStore } from "../../src/memory/store.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { rng } from "./rng.js";

// Families of English words and of other scripts; σ never ends a word as written (SQLite folds ς and σ alike,
// the other backends keep them apart: docs/RECALL.md, Words in every script).
export const WORDS = [
  "deploy deployed deploying deployment redeploy",
  "create creating creation created",
  "run running runs ran",
  "stop stopped stopping",
  "go goes going went gone buy bought child children make made making",
  "migrate migration migrations",
  "the a of and or not near",
  "café cafe CAFÉ naïve résumé Straße",
  "Αθήνα αθηνα λόγος Σίσυφος",
  "ёжик ежик Москва привет",
  "كِتَاب كتاب مرحبا",
  "配置文件 配置 文件 東京 東京でカメラ カメラ 한국어 사과를 사과 猫 我的猫",
  "\u0301\u0302 e\u0301te\u0301 x\u200By",
  "👍🏽deploy 🚀 ❤️",
  "3.14 1,000 v2.0.1 192.168.0.1",
  "snake_case camelCase kebab-case /usr/bin user@example.com",
  "don't l'été O'Brien well-known",
].map((line) => line.split(" "));
export const HOSTILE = [
  '"',
  '"unclosed deploy',
  "deploy*",
  "^deploy",
  "-deploy",
  "NEAR(deploy run)",
  "deploy AND run",
  "NOT",
  "text:deploy",
  "sid:s1",
  "(((",
  "\\",
  "\u0000",
  "\uD800",
  "\u0301",
  "deploy & run",
  "deploy:*",
  "the a of",
  "!!! ...",
  "x".repeat(3000),
];

const rand = rng(20240605);
// Which appended messages are an agent's tool steps (no text part at all), drawn apart so the rest stays as seeded.
const steps = rng(20261126);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const word = () => pick(pick(WORDS));
const sentence = (n: number) =>
  Array.from({ length: n }, () => word()).join(pick([" ", " ", ", ", "\n", " - ", "("]));

export type Op =
  | { kind: "append"; session: string; message: SessionMessage; parent?: string }
  | { kind: "update"; session: string; message: SessionMessage }
  | { kind: "delete"; session: string; id: string };

export const SESSIONS = ["s0", "s1", "s2"];
export const ops: Op[] = [];
const live = new Map<string, string[]>(SESSIONS.map((s) => [s, []]));
for (let i = 0; i < 200; i++) {
  const session = pick(SESSIONS);
  const stored = live.get(session)!;
  let parts: SessionMessage["parts"] = [{ type: "text", text: sentence(1 + Math.floor(rand() * 8)) }];
  // Only text parts are searchable: a word elsewhere must be found nowhere.
  if (rand() < 0.1) parts.push({ type: "reasoning", text: "hiddenword" });
  if (steps() < 0.15)
    parts = [{ type: "tool-lookup", toolCallId: `c${i}`, state: "input-available", input: {} }];
  const message: SessionMessage = { id: `m${i}`, role: i % 3 === 0 ? "assistant" : "user", parts };
  const roll = rand();
  if (roll < 0.05 && stored.length > 0) {
    ops.push({ kind: "update", session, message: { ...message, id: pick(stored) } });
  } else if (roll < 0.08 && stored.length > 0) {
    const id = stored.splice(Math.floor(rand() * stored.length), 1)[0]!;
    ops.push({ kind: "delete", session, id });
  } else {
    const parent = stored.length > 0 && rand() < 0.15 ? pick(stored) : undefined;
    ops.push(
      parent === undefined
        ? { kind: "append", session, message }
        : { kind: "append", session, message, parent },
    );
    stored.push(message.id);
  }
}
export const entries = Array.from({ length: 40 }, (_, i) => ({
  label: i % 3 === 0 ? "other" : "kb",
  key: i % 4 === 0 ? `${word()} title ${i}` : `k${i}`,
  content: sentence(1 + Math.floor(rand() * 6)),
}));
export const queries = [
  ...HOSTILE,
  "hiddenword",
  ...Array.from({ length: 80 }, () => {
    const roll = rand();
    if (roll < 0.5) return Array.from({ length: 1 + Math.floor(rand() * 2) }, word).join(" ");
    if (roll < 0.75) return `"${word()} ${word()}"`;
    const w = word();
    return w.slice(0, Math.max(1, w.length - 2));
  }),
];

/** Writes the corpus to `store`: the messages, one compaction overlay per session with a long enough path, the entries. */
export async function write(store: SessionStore): Promise<void> {
  for (const op of ops) {
    const session = store.session(op.session);
    if (op.kind === "append") await session.appendMessage(structuredClone(op.message), op.parent);
    else if (op.kind === "update") await session.updateMessage(structuredClone(op.message));
    else await session.deleteMessages([op.id]);
  }
  // One overlay per session over a stretch of its active path, so hits can say which summary covers them.
  for (const id of SESSIONS) {
    const session = store.session(id);
    const path = await session.getHistory();
    if (path.length >= 6) await session.addCompaction(`summary of ${id}`, path[1]!.id, path[3]!.id);
  }
  assert.ok(hasContextStorage(store));
  for (const entry of entries) await store.entries.setEntry(entry.label, entry.key, entry.content);
}

/**
 * A memory, a SQLite and (given `pglite`) a PGlite store holding the corpus, each named, and a Citus store when
 * `citus` makes one; close them, then `pglite`, when done.
 */
export async function corpusStores(
  pglite: PGlite | undefined,
  schema: string,
  citus?: (() => PostgresStore) | null,
): Promise<{ name: string; store: SessionStore }[]> {
  const stores = [
    { name: "memory", store: new MemoryStore() as SessionStore },
    { name: "sqlite", store: new SqliteStore(":memory:", { driver: "better-sqlite3" }) as SessionStore },
    ...(pglite
      ? [{ name: "pglite", store: (await PostgresStore.open(pglite, { schema })) as SessionStore }]
      : []),
    ...(citus ? [{ name: "citus", store: citus() as SessionStore }] : []),
  ];
  for (const { store } of stores) await write(store);
  return stores;
}
