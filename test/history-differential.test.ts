// A seeded differential test of overlay reads: the same random tree (mostly a chain, some forks) and the same
// random overlays (nested from the first message, ranges on one path, a few with an endpoint off the path) on
// memory, SQLite, PGlite and a Citus cluster (when there is one: test/fixtures/citus-db.ts); every backend must read the same history and the same context tokens at every leaf.
// Postgres finds which overlays lie on a path with one climb through their depths (sql/engines/postgres/tree.ts), SQLite and
// memory by other means, so a wrong step shows as a difference.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { SessionMessage } from "../src/contract/message.js";
import type { SessionStore } from "../src/contract/store.js";
import { MemoryStore } from "../src/memory/store.js";
import { PostgresStore } from "../src/postgres/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { citusStores } from "./fixtures/citus-db.js";
import { pgliteUnlessSwitchedOff } from "./fixtures/postgres-db.js";

const ROUNDS = 2;
const MESSAGES = 100;
const OVERLAYS = 40;
const READS = 25;

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

const pglite = await pgliteUnlessSwitchedOff();
const citus = await citusStores("history_differential");
const stores: { name: string; store: SessionStore }[] = [
  { name: "memory", store: new MemoryStore() },
  { name: "sqlite", store: new SqliteStore(":memory:") },
  ...(pglite
    ? [{ name: "pglite", store: await PostgresStore.open(pglite, { schema: "history_differential" }) }]
    : []),
  ...(citus ? [{ name: "citus", store: citus() }] : []),
];
after(async () => {
  for (const { store } of stores) await store.close();
  await pglite?.close();
});

/** What a read gives, comparable across backends: ids (a summary by its text) and the token estimate. */
async function read(store: SessionStore, sessionId: string, leaf: string | undefined): Promise<string> {
  const session = store.session(sessionId);
  const history = await session.getHistory(leaf);
  const shown = history.map((m) => {
    const part = m.parts[0];
    return m.id.startsWith("compaction_") && part?.type === "text" ? `summary:${part.text}` : m.id;
  });
  return JSON.stringify([shown, await session.getContextTokens?.(leaf)]);
}

test("every backend reads the same history and context tokens through random overlays", async () => {
  const next = random(31);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  for (let round = 0; round < ROUNDS; round++) {
    const sessionId = `r${round}`;
    const ids: string[] = [];
    const parentOf = new Map<string, string | null>();
    for (let i = 0; i < MESSAGES; i++) {
      const id = `m${i}`;
      const parent = i === 0 ? null : next() < 0.9 ? ids[i - 1]! : pick(ids);
      parentOf.set(id, parent);
      ids.push(id);
      const message: SessionMessage = {
        id,
        role: i % 2 ? "assistant" : "user",
        parts: [{ type: "text", text: "word ".repeat(1 + (i % 13)) }],
      };
      for (const { store } of stores) await store.session(sessionId).appendMessage(message, parent);
    }
    const pathTo = (leaf: string): string[] => {
      const path: string[] = [];
      for (let at: string | null | undefined = leaf; at; at = parentOf.get(at)) path.unshift(at);
      return path;
    };
    for (let k = 0; k < OVERLAYS; k++) {
      const path = pathTo(pick(ids));
      let [a, b] = [Math.floor(next() * path.length), Math.floor(next() * path.length)].sort((x, y) => x - y);
      if (next() < 0.3) a = 0; // nested: from the first message, as repeated compaction leaves them
      if (next() < 0.1) b = a!; // one message
      const from = next() < 0.05 ? pick(ids) : path[a!]!; // now and then an endpoint off the path
      for (const { store } of stores) await store.session(sessionId).addCompaction(`s${k}`, from, path[b!]!);
    }
    for (let q = 0; q < READS; q++) {
      const leaf = q === 0 ? undefined : pick(ids);
      const [reference, ...others] = await Promise.all(
        stores.map(({ store }) => read(store, sessionId, leaf)),
      );
      for (const [i, answer] of others.entries()) {
        assert.equal(
          answer,
          reference,
          `${stores[i + 1]!.name} at leaf ${leaf ?? "(latest)"} of ${sessionId}`,
        );
      }
    }
  }
});
