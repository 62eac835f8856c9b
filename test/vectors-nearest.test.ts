// The vector channel of hybrid recall (store.vectors) on every backend with a deterministic embedder: nearest()
// finds by meaning what shares no word with the query, within a session, a set of sessions, a role, a time range
// or a session's active path, and a search fuses its hits with the text channel's.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { StoreSearchOptions } from "../src/contract/search.js";
import type { NearestOptions } from "../src/search/vectors/types.js";
import { msg } from "../src/testing/contract/harness.js";
import {
  channel,
  describeTargets,
  importCrowd,
  seed,
  seedCrowd,
  TEXTS,
  vectorReads,
  withEmbedded,
} from "./vectors/helpers.js";
import type { VectorStore } from "./vectors/targets.js";

/** Session "p": "car", then 80 turns nearer to "automobile" on a branch the conversation left: it went on from "car". */
async function seedLeftBranch(store: VectorStore, sessionId = "p"): Promise<void> {
  const p = store.session(sessionId);
  await p.appendMessage(msg("car", TEXTS.car));
  for (let i = 0; i < 80; i++)
    await p.appendMessage(msg(`g${i}`, "sedan sedan cars"), i === 0 ? "car" : `g${i - 1}`);
  await p.appendMessage(msg("food", TEXTS.food), "car");
}

await describeTargets((target) => {
  test("nearest finds by meaning a message that shares no word with the query, in scope", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      await seed(store);
      const vectors = channel(store);
      await vectors.idle();
      assert.equal(vectors.index, target.index);
      assert.deepEqual(await vectors.status(), { embedded: 4, pending: 0 });
      const best = async (query: string, sessionId?: string) =>
        storage.ids(
          store,
          await vectors.nearest(query, { limit: 1, ...(sessionId === undefined ? {} : { sessionId }) }),
        );
      assert.deepEqual(await best("automobile"), ["car"]);
      assert.deepEqual(await best("which doctor"), ["doc"]);
      assert.deepEqual(await best("guitar concert"), ["music"]);
      // Within session "b" the car message is out of scope.
      assert.notDeepEqual(await best("automobile", "b"), ["car"]);
      assert.deepEqual(await best("guitar concert", "b"), ["music"]);
      assert.deepEqual(await vectors.nearest("automobile", { sessionId: "nobody", limit: 5 }), []);
      // A set of sessions is the scope too.
      const inSet = async (query: string, sessionIds: string[]) =>
        storage.ids(store, await vectors.nearest(query, { sessionIds, limit: 1 }));
      assert.deepEqual(await inSet("automobile", ["b", "a"]), ["car"]);
      assert.notDeepEqual(await inSet("automobile", ["b", "nobody"]), ["car"]);
      assert.deepEqual(await inSet("automobile", []), []);
      assert.deepEqual(await inSet("automobile", ["nobody"]), []);
      await assert.rejects(vectors.nearest("automobile", { sessionIds: "a" as never, limit: 1 }), {
        code: "INVALID_ARGUMENT",
      });
      const all = await storage.ids(store, await vectors.nearest("automobile", { limit: 10 }));
      assert.deepEqual([...all].sort(), ["car", "doc", "food", "music"]);
      assert.deepEqual(await vectors.nearest("automobile", { limit: 0 }), []);
      assert.deepEqual(await vectors.nearest("   ", { limit: 3 }), []);
    });
  });

  test("search fuses the channels: a hit only the vectors find is among the results; vectors: false leaves it out", async () => {
    await withEmbedded(target.fresh, async (store) => {
      await seed(store);
      await store.session("a").appendMessage(msg("late", "Dinner with the physician was fun"));
      await channel(store).idle();
      // No message holds "automobile": only the vector channel finds the sedan.
      const fused = await store.searchMessages("Which automobile did I get?", { sessionId: "a" });
      assert.ok(
        fused.some((h) => h.id === "car"),
        fused.map((h) => h.id).join(),
      );
      assert.deepEqual(
        await store.searchMessages("Which automobile did I get?", { sessionId: "a", vectors: false }),
        [],
      );
      // The text channel still ranks its own hits: both channels agree on the physician messages.
      const doctor = await store.searchMessages("physician doctor", { sessionId: "a", limit: 2 });
      assert.deepEqual(doctor.map((h) => h.id).sort(), ["doc", "late"]);
      assert.ok(doctor.every((h) => typeof h.score === "number"));
      // Filters apply to vector hits too: none in another session, none of another role.
      const elsewhere = await store.searchMessages("automobile physician", { sessionId: "b" });
      assert.ok(elsewhere.every((h) => h.sessionId === "b"));
      const users = await store.searchMessages("which doctor", { sessionId: "a", role: "user" });
      assert.ok(users.every((h) => h.role === "user") && !users.some((h) => h.id === "doc"));
      assert.deepEqual(await store.searchMessages("Which automobile?", { match: "all" }), []);
    });
  });

  test("a set of sessions gets the vector hits of its own sessions, however many nearer ones others hold", async () => {
    await withEmbedded(target.fresh, async (store) => {
      await seed(store);
      // More messages nearer to "automobile" than the channel brings to a search, all in another session.
      const other = store.session("garage");
      for (let i = 0; i < 80; i++) await other.appendMessage(msg(`g${i}`, "sedan sedan cars"));
      await channel(store).idle();
      const hits = await store.searchMessages("Which automobile did I get?", { sessionIds: ["a", "b"] });
      assert.ok(
        hits.some((h) => h.id === "car"),
        hits.map((h) => h.id).join(),
      );
    });
  });

  test("nearest keeps to a role and a time range inside its read, however many nearer messages fail them", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      const { before, after } = await seedCrowd(store);
      const vectors = channel(store);
      await vectors.idle();
      const best = async (filters: Omit<NearestOptions, "limit">, limit = 1) =>
        storage.ids(store, await vectors.nearest("automobile", { limit, ...filters }));
      // The crowd's vectors are all alike (equally near): any one of them is the nearest.
      const crowd = async (filters: Omit<NearestOptions, "limit">) =>
        assert.match((await best(filters)).join(), /^g\d+$/, JSON.stringify(filters));
      await crowd({});
      assert.deepEqual(await best({ role: "user" }), ["car"]);
      assert.deepEqual(await best({ role: ["system", "user"] }, 5), ["car"]);
      assert.deepEqual(await best({ until: before }), ["car"]);
      assert.deepEqual(await best({ until: new Date(before) }), ["car"]);
      assert.deepEqual(await best({ since: after }, 5), ["van"]);
      assert.deepEqual(await best({ role: "user", sessionIds: ["b", "a"] }), ["car"]);
      assert.deepEqual(await best({ role: "user", sessionId: "b" }), []);
      assert.deepEqual(await best({ role: "user", since: before }), []);
      // A role or session id no stored row can hold (Postgres refuses U+0000 in text) matches nothing.
      assert.deepEqual(await best({ role: "user\u0000" }), []);
      assert.deepEqual(await best({ sessionIds: ["a\u0000"] }), []);
      await crowd({ since: before, until: after });
      // Bounds of extended years are compared as instants: these two keep every message.
      await crowd({ since: "-000001-01-01T00:00:00.000Z", until: "+010000-01-01T00:00:00.000Z" });
    });
  });

  test("a role or time filter gets the vector hits that pass it, however many nearer ones fail it", async () => {
    await withEmbedded(target.fresh, async (store) => {
      const { before, after } = await seedCrowd(store);
      await channel(store).idle();
      // No message holds a word of the question: only the vector channel finds car and van.
      const found = async (filters: StoreSearchOptions) =>
        (await store.searchMessages("Which automobile did I get?", filters)).map((h) => h.id);
      assert.deepEqual(await found({ role: "user" }), ["car"]);
      assert.deepEqual(await found({ until: before }), ["car"]);
      assert.deepEqual(await found({ since: after, sessionId: "a" }), ["van"]);
      assert.deepEqual(await found({ role: "user", until: before, sessionIds: ["a"] }), ["car"]);
    });
  });

  test("an active-branch read keeps to the session's path, however many nearer messages a left branch holds", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      await seedLeftBranch(store);
      const vectors = channel(store);
      await vectors.idle();
      const best = async (options: Omit<NearestOptions, "limit">) =>
        storage.ids(store, await vectors.nearest("automobile", { limit: 1, ...options }));
      assert.match((await best({ sessionId: "p" })).join(), /^g\d+$/);
      assert.deepEqual(await best({ sessionId: "p", branch: "active" }), ["car"]);
      assert.deepEqual(await best({ sessionId: "p", branch: "active", role: "assistant" }), []);
      // No message holds a word of the question: only the vector channel finds "car".
      const hits = await store.searchMessages("Which automobile did I get?", {
        sessionId: "p",
        branch: "active",
      });
      assert.equal(hits[0]?.id, "car", hits.map((h) => h.id).join());
      assert.ok(hits.every((h) => h.onActivePath));
    });
  });

  test("an active-branch read of a set keeps each branched session to its path, a linear one read whole", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      // Session "p" left a long branch (seedLeftBranch); "q" is linear.
      await seedLeftBranch(store);
      await store.session("q").appendMessage(msg("music", TEXTS.music));
      const vectors = channel(store);
      await vectors.idle();
      const best = async (options: Omit<NearestOptions, "limit">, limit = 1) =>
        storage.ids(store, await vectors.nearest("automobile", { limit, ...options }));
      assert.match((await best({ sessionIds: ["p", "q"] }, 2)).join(), /^g\d+,g\d+$/);
      assert.deepEqual(await best({ sessionIds: ["q", "p"], branch: "active" }), ["car"]);
      // On pgvector the HNSW scan never reaches "food" here (far from the query, among 80 equal vectors): the
      // exact read of the newest passing vectors finds it.
      assert.deepEqual([...(await best({ sessionIds: ["p", "q"], branch: "active" }, 10))].sort(), [
        "car",
        "food",
        "music",
      ]);
      assert.deepEqual(await best({ sessionIds: ["q", "nobody"], branch: "active" }), ["music"]);
      // A user's sessions through a search: only the vector channel finds "car" (no word of the question).
      const hits = await store.searchMessages("Which automobile did I get?", {
        sessionIds: ["p", "q"],
        branch: "active",
        limit: 1,
      });
      assert.deepEqual(
        hits.map((h) => h.id),
        ["car"],
      );
    });
  });

  test("an active-branch read of the whole store keeps the sessions its nearest messages come from to their paths", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      // Two sessions left a long branch nearer to the query than anything on their paths.
      await seedLeftBranch(store, "p");
      await seedLeftBranch(store, "r");
      await store.session("q").appendMessage(msg("music", TEXTS.music));
      const vectors = channel(store);
      await vectors.idle();
      const nearest = async (limit: number, branch?: "active") =>
        vectors.nearest("automobile", { limit, ...(branch === undefined ? {} : { branch }) });
      assert.match((await storage.ids(store, await nearest(1))).join(), /^g\d+$/);
      // The first read brings one session's branch, the next the other's: each is kept to its path in turn.
      assert.deepEqual(await storage.ids(store, await nearest(1, "active")), ["car"]);
      const active = await storage.ids(store, await nearest(10, "active"));
      assert.deepEqual([...active].sort(), ["car", "car", "food", "food", "music"]);
      // A store-wide search: only the vector channel finds "car" (no word of the question).
      const hits = await store.searchMessages("Which automobile did I get?", { branch: "active", limit: 2 });
      assert.deepEqual(hits.map((h) => `${h.sessionId}/${h.id}`).sort(), ["p/car", "r/car"]);
    });
  });

  test("an active-branch read of the whole store reads once when its nearest messages of a branched session are on its path", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      // Session "p" left a branch ("music", far from the query); its two nearest messages are on its path.
      const p = store.session("p");
      await p.appendMessage(msg("car", TEXTS.car));
      await p.appendMessage(msg("music", TEXTS.music), "car");
      await p.appendMessage(msg("van", "The new sedan is parked outside today"), "car");
      await store.session("q").appendMessage(msg("food", TEXTS.food));
      const vectors = channel(store);
      await vectors.idle();
      let found: number[] = [];
      const reads = await vectorReads(store, async () => {
        found = await vectors.nearest("automobile", { limit: 2, branch: "active" });
      });
      assert.deepEqual([...(await storage.ids(store, found))].sort(), ["car", "van"]);
      // Keeping "p" to its path could leave out only what the answer does not hold: no second read.
      assert.equal(reads, 1);
    });
  });

  test("a filter finds the one message that passes it behind more nearer ones than sqlite-vec's KNN answers", async () => {
    await withEmbedded(target.fresh, async (store, storage) => {
      await importCrowd(store, 4200);
      // And a session whose turns are nearer still but fewer than sqlite-vec's first read: its neighbours then
      // come from both sessions, neither filling the read, though the read as a whole was full.
      await importCrowd(store, 100, { sessionId: "near", text: "cars" });
      const vectors = channel(store);
      await vectors.backfill({ batchSize: 500 });
      const best = async (filters: Omit<NearestOptions, "limit">) =>
        storage.ids(store, await vectors.nearest("automobile", { limit: 3, ...filters }));
      assert.deepEqual(await best({ role: "user" }), ["car", "car"]);
      assert.deepEqual(await best({ until: "2021-01-01T00:00:00.000Z", sessionIds: ["crowd"] }), ["car"]);
      assert.equal((await best({ role: "assistant", sessionId: "crowd" })).length, 3);
    });
  });
});
