// The hit type users can trust: `createdAt`, `sessionId`, `score` and `rank` are required on what Session.search,
// SessionManager.search and the built-in stores return (compile-time, `tsc -p tsconfig.json`), while a provider of
// another library may still return the reference's loose `{ id, role, content, createdAt? }`: Session.search fills
// its gaps by the documented rule. The per-backend behaviour is the contract spec search-hits.spec.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  MemoryStore,
  type SearchHit,
  type SearchResult,
  Session,
  SessionManager,
  type SessionMessage,
  type SessionProvider,
  SqliteStore,
} from "../src/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Fails to compile unless `T` is `true` (use with `Equal`). */
function expectType<T extends true>(..._proof: T[]): void {}

type Exact = { createdAt: string; sessionId: string; score: number; rank: number };
type ExactFields<H> = Pick<H, keyof Exact & keyof H>;

test("Session, SessionManager and the built-in stores return hits whose fields are not optional", async () => {
  const store = new SqliteStore(":memory:");
  const memory = new MemoryStore();
  try {
    await store.session("s").appendMessage(msg("a", "kayak trip"));
    const fromStore = await store.searchMessages("kayak");
    const fromMemory = await memory.searchMessages("kayak");
    const fromProvider = await store.session("s").searchMessages("kayak");
    const fromSession = await Session.create(store).forSession("s").search("kayak");
    const fromManager = await SessionManager.create(memory).search("kayak");
    expectType<Equal<ExactFields<(typeof fromStore)[number]>, Exact>>();
    expectType<Equal<ExactFields<(typeof fromMemory)[number]>, Exact>>();
    expectType<Equal<ExactFields<(typeof fromProvider)[number]>, Exact>>();
    expectType<Equal<ExactFields<(typeof fromSession)[number]>, Exact>>();
    expectType<Equal<ExactFields<(typeof fromManager)[number]>, Exact>>();
    // A sort by rank needs no `?? 0`.
    const sorted = [...fromSession].sort((x, y) => x.rank - y.rank);
    assert.deepEqual(
      sorted.map((h) => [h.id, h.rank, h.sessionId]),
      [["a", 1, "s"]],
    );
    // The loose provider contract stays the reference's: every field beyond id, role and content optional.
    expectType<Equal<SearchResult["createdAt"], string | undefined>>();
    expectType<Equal<SearchResult["score"], number | undefined>>();
    // @ts-expect-error a loose result is no exact hit
    const _exact: SearchHit = { id: "x", role: "user", content: "" } satisfies SearchResult;
  } finally {
    await store.close();
    await memory.close();
  }
});

test("Session.search over a provider of another library: ranked in its order, its gaps filled by the rule", async () => {
  const inner = new MemoryStore().session("ref");
  await inner.appendMessage(msg("m1", "kayak one"));
  await inner.appendMessage(msg("m2", "kayak two"));
  const when = new Date("2024-05-01T10:00:00.000Z");
  // The reference's results: no score, no session, a time only sometimes (and a JavaScript provider's Date).
  const reference: SearchResult[] = [
    { id: "m2", role: "user", content: "kayak two" },
    { id: "m1", role: "user", content: "kayak one", createdAt: when as unknown as string },
    { id: "m3", role: "user", content: "kayak three", createdAt: "", sessionId: "elsewhere", score: 2 },
  ];
  const provider: SessionProvider = {
    getMessage: (id) => inner.getMessage(id),
    getHistory: (leaf) => inner.getHistory(leaf),
    getLatestLeaf: () => inner.getLatestLeaf(),
    getBranches: (id) => inner.getBranches(id),
    getPathLength: (leaf) => inner.getPathLength(leaf),
    appendMessage: (m, parent) => inner.appendMessage(m, parent),
    updateMessage: (m) => inner.updateMessage(m),
    deleteMessages: (ids) => inner.deleteMessages(ids),
    clearMessages: () => inner.clearMessages(),
    addCompaction: (summary, from, to) => inner.addCompaction(summary, from, to),
    getCompactions: () => inner.getCompactions(),
    searchMessages: async () => reference,
  };
  const session = Session.create(provider);
  const hits = await session.search("kayak");
  // A Session on a provider is the default session's (`""`): its hits say so.
  assert.equal(session.sessionId, "");
  assert.deepEqual(
    hits.map(({ id, rank, sessionId, createdAt, score }) => ({ id, rank, sessionId, createdAt, score })),
    [
      { id: "m2", rank: 1, sessionId: "", createdAt: "", score: 0 },
      { id: "m1", rank: 2, sessionId: "", createdAt: when.toISOString(), score: 0 },
      { id: "m3", rank: 3, sessionId: "elsewhere", createdAt: "", score: 2 },
    ],
  );
  // The provider's own objects are left as they were.
  assert.equal("rank" in reference[0]!, false);
});

function msg(id: string, text: string): SessionMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}
