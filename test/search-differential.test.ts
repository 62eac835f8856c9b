// A small seeded differential test of search: the same writes on memory, SQLite and PGlite, then the same queries
// (drawn from the corpus, plus hostile ones), ranked recall and all-words alike; every backend must match the same
// messages and entries, and rank the messages holding every word first. Relevance within a tier may differ
// (weights are computed per backend), so sets are compared, with a limit above any match count. The fuzz this
// comes from found SQLite folding non-Latin text differently, Postgres entries not found by key, and a label's
// entries hidden by other labels on SQLite.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { hasContextStorage, type SessionStore } from "../src/store/types.js";
import type { SessionMessage } from "../src/types.js";

/** mulberry32: a few lines, and the same sequence on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Families of English words and of other scripts; σ never ends a word as written (SQLite folds ς and σ alike,
// the other backends keep them apart: docs/ARCHITECTURE.md, Search).
const WORDS = [
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
const HOSTILE = [
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

const rand = random(20240605);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const word = () => pick(pick(WORDS));
const sentence = (n: number) =>
  Array.from({ length: n }, () => word()).join(pick([" ", " ", ", ", "\n", " - ", "("]));

type Op =
  | { kind: "append"; session: string; message: SessionMessage; parent?: string }
  | { kind: "update"; session: string; message: SessionMessage }
  | { kind: "delete"; session: string; id: string };

const SESSIONS = ["s0", "s1", "s2"];
const ops: Op[] = [];
const live = new Map<string, string[]>(SESSIONS.map((s) => [s, []]));
for (let i = 0; i < 200; i++) {
  const session = pick(SESSIONS);
  const stored = live.get(session)!;
  const parts: SessionMessage["parts"] = [{ type: "text", text: sentence(1 + Math.floor(rand() * 8)) }];
  // Only text parts are searchable: a word elsewhere must be found nowhere.
  if (rand() < 0.1) parts.push({ type: "reasoning", text: "hiddenword" });
  const message: SessionMessage = { id: `m${i}`, role: "user", parts };
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
const entries = Array.from({ length: 40 }, (_, i) => ({
  label: i % 3 === 0 ? "other" : "kb",
  key: i % 4 === 0 ? `${word()} title ${i}` : `k${i}`,
  content: sentence(1 + Math.floor(rand() * 6)),
}));
const queries = [
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

async function write(store: SessionStore): Promise<void> {
  for (const op of ops) {
    const session = store.session(op.session);
    if (op.kind === "append") await session.appendMessage(structuredClone(op.message), op.parent);
    else if (op.kind === "update") await session.updateMessage(structuredClone(op.message));
    else await session.deleteMessages([op.id]);
  }
  assert.ok(hasContextStorage(store));
  for (const entry of entries) await store.entries.setEntry(entry.label, entry.key, entry.content);
}

const SCOPES = [{}, { sessionId: "s1" }, { branch: "active" as const }];
// The corpus's stop words (ranked recall drops them; the all-words search keeps them).
const STOP = new Set(["the", "a", "of", "and", "or", "not"]);

/** Every query's matches on `store`, one line each, for a diff that names the query. */
async function answers(store: SessionStore): Promise<string[]> {
  const out: string[] = [];
  for (const query of queries) {
    for (const scope of SCOPES) {
      const key = (h: { sessionId?: string; id: string }) => `${h.sessionId}/${h.id}`;
      const ranked = await store.searchMessages(query, { ...scope, limit: 1000 });
      const all = await store.searchMessages(query, { ...scope, limit: 1000, match: "all" });
      out.push(`${JSON.stringify(query)} ${JSON.stringify(scope)}: ${ranked.map(key).sort()}`);
      out.push(`${JSON.stringify(query)} ${JSON.stringify(scope)} all: ${all.map(key).sort()}`);
      // Ranked recall puts the messages holding every word first (for queries of content words, where both
      // searches read the same words).
      if (!/["\s]/.test(query.trim()) || /^[\p{L}\p{N}]+ [\p{L}\p{N}]+$/u.test(query)) {
        if (!query.split(" ").some((w) => STOP.has(w.toLowerCase()))) {
          const first = new Set(ranked.slice(0, all.length).map(key));
          const missing = all.map(key).filter((k) => !first.has(k));
          assert.deepEqual(missing, [], `all-words hits come first for ${JSON.stringify(query)}`);
        }
      }
    }
    assert.ok(hasContextStorage(store));
    const found = await store.entries.searchEntries("kb", query, 1000);
    out.push(`${JSON.stringify(query)} entries: ${found.map((h) => h.key).sort()}`);
  }
  return out;
}

const pglite = await PGlite.create();
const stores: { name: string; store: SessionStore }[] = [];
before(async () => {
  stores.push({ name: "memory", store: new MemoryStore() });
  stores.push({ name: "sqlite", store: new SqliteStore(":memory:", { driver: "better-sqlite3" }) });
  stores.push({ name: "pglite", store: await PostgresStore.open(pglite, { schema: "differential" }) });
  for (const { store } of stores) await write(store);
});
after(async () => {
  for (const { store } of stores) await store.close();
  await pglite.close();
});

test("every backend matches the same messages and entries for the same queries", async () => {
  const [reference, ...others] = stores;
  const expected = await answers(reference!.store);
  assert.ok(
    expected.some((line) => /: \S/.test(line)),
    "the queries match something",
  );
  assert.ok(expected.some((line) => line.startsWith('"hiddenword" {}: ') && line.endsWith(": ")));
  for (const { name, store } of others) {
    const actual = await answers(store);
    const differing = actual.filter((line, i) => line !== expected[i]).slice(0, 5);
    assert.deepEqual(differing, [], `${name} differs from ${reference!.name}:\n${differing.join("\n")}`);
  }
});
