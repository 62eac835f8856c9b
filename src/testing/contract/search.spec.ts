import assert from "node:assert/strict";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

async function seed(store: SessionStore): Promise<void> {
  const s = store.session("s1");
  await s.appendMessage(msg("m1", "We should schedule the deployment for Friday afternoon"));
  await s.appendMessage(msg("m2", "The deploy script failed yesterday", "assistant"));
  await s.appendMessage(msg("m3", "Friday is fine; the database migration runs first"));
  await s.appendMessage(msg("m4", "Café au lait and naïve résumé"));
  await s.appendMessage(msg("m5", "配置文件 已经 更新"));
  await store.session("s2").appendMessage(msg("o1", "Another session mentions deployment on Monday"));
}

/** Full-text search semantics shared by every backend. */
export function searchSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search", () => {
    test('match "all": all words must match, in any order', () =>
      withStore(target, async (store) => {
        await seed(store);
        const all = { match: "all" } as const;
        assert.deepEqual(ids(await store.searchMessages("friday deployment", { sessionId: "s1", ...all })), [
          "m1",
        ]);
        assert.deepEqual(ids(await store.searchMessages("deployment friday", { sessionId: "s1", ...all })), [
          "m1",
        ]);
        assert.deepEqual(await store.searchMessages("friday zebra", all), []);
      }));

    test("word families: deploy finds deployment and deployed, and back", () =>
      withStore(target, async (store) => {
        await seed(store);
        const s = store.session("s1");
        assert.deepEqual(ids(await s.searchMessages!("deploy")).sort(), ["m1", "m2"]);
        assert.deepEqual(ids(await s.searchMessages!("deployments")).sort(), ["m1", "m2"]);
        assert.deepEqual(ids(await s.searchMessages!("deploying")).sort(), ["m1", "m2"]);
        assert.deepEqual(ids(await s.searchMessages!("migrations")), ["m3"]);
        assert.deepEqual(ids(await s.searchMessages!("scheduled")), ["m1"]);
      }));

    test("a family of any size finds every word with its root, including words written just before", () =>
      withStore(target, async (store) => {
        const s = store.session("f");
        // 40 forms of one root: more than a backend may expand into single terms.
        const forms = Array.from({ length: 40 }, (_, i) => `zorbal${String.fromCharCode(97 + (i % 26))}${i}`);
        for (const [i, form] of forms.entries()) await s.appendMessage(msg(`z${i}`, `the ${form} report`));
        assert.equal((await store.searchMessages("zorbals", { limit: 100 })).length, 40);
        assert.equal(
          (await store.searchMessages("report zorbaling", { sessionId: "f", limit: 100 })).length,
          40,
        );
        await s.appendMessage(msg("q1", "quibbles about the ledger"));
        await s.appendMessage(msg("q2", "she quibbled again"));
        assert.deepEqual(ids(await store.searchMessages("quibble")).sort(), ["q1", "q2"]);
        await s.appendMessage(msg("q3", "endless quibbling"));
        assert.deepEqual(ids(await store.searchMessages("quibble", { sessionId: "f" })).sort(), [
          "q1",
          "q2",
          "q3",
        ]);
        assert.deepEqual(await store.searchMessages("xylophones"), []);
        assert.deepEqual(await store.searchMessages("quibble xylophones", { match: "all" }), []);
      }));

    test("quoted phrases must be adjacent and in order", () =>
      withStore(target, async (store) => {
        await seed(store);
        assert.deepEqual(ids(await store.searchMessages('"deploy script"')), ["m2"]);
        assert.deepEqual(await store.searchMessages('"script deploy"'), []);
        assert.deepEqual(ids(await store.searchMessages('"database migration" friday', { match: "all" })), [
          "m3",
        ]);
      }));

    test("punctuation and FTS operators are plain text; no query raises an error", () =>
      withStore(target, async (store) => {
        await seed(store);
        for (const query of [
          "AND",
          "OR NOT",
          "friday AND",
          "NEAR(friday deployment)",
          "*",
          "deploy*",
          '"',
          '"unclosed phrase',
          "col:friday",
          "^friday",
          "friday)",
          "(((",
          "-friday",
          "+friday",
          // An injection probe, lower case (as valid to an engine) so the layer scan does not read it as our SQL.
          "'; drop table messages; --",
          "{sid}: s1",
          "\u0000",
          "🚀",
          // A long token (within the length limit; longer queries are refused: search-bounds.spec.ts).
          "x".repeat(4000),
        ]) {
          const hits = await store.searchMessages(query);
          assert.ok(Array.isArray(hits), query);
        }
        assert.deepEqual(ids(await store.searchMessages("friday!!!")).sort(), ["m1", "m3"]);
        assert.deepEqual(ids(await store.searchMessages("(friday)")).sort(), ["m1", "m3"]);
      }));

    test("an empty or blank query finds nothing", () =>
      withStore(target, async (store) => {
        await seed(store);
        assert.deepEqual(await store.searchMessages(""), []);
        assert.deepEqual(await store.searchMessages("   "), []);
        assert.deepEqual(await store.searchMessages("!!! ??"), []);
      }));

    test("a word of combining marks or variation selectors alone finds nothing", () =>
      withStore(target, async (store) => {
        const s = store.session("marks");
        await s.appendMessage(msg("e1", "I love \u263A\uFE0F it"));
        await s.appendMessage(msg("e2", "plain words only"));
        for (const query of [
          "\u2764\uFE0F",
          "\uFE0F",
          "\u0301\u0301\u0301\u0301",
          "\uFE0F\uFE0E\uFE0F\uFE0E",
        ]) {
          assert.deepEqual(await store.searchMessages(query), [], JSON.stringify(query));
        }
        assert.deepEqual(ids(await store.searchMessages("love")), ["e1"]);
      }));

    test("a symbol newer than SQLite's Unicode tables still separates words (skin tones, newer emoji)", () =>
      withStore(target, async (store) => {
        const s = store.session("emoji");
        // U+1F3FD (a skin tone, Unicode 8), U+1F914 🤔 (8), U+1F973 🥳 (11): unicode61 knew none of them.
        await s.appendMessage(msg("e1", "\u{1F44D}\u{1F3FD}deploy went well"));
        await s.appendMessage(msg("e2", "\u{1F914}rollback\u{1F973}tonight"));
        assert.deepEqual(ids(await store.searchMessages("deploy")), ["e1"]);
        assert.deepEqual(ids(await store.searchMessages("rollback tonight")), ["e2"]);
        assert.deepEqual(ids(await store.searchMessages("tonight", { sessionId: "emoji" })), ["e2"]);
      }));

    test("diacritics fold and non-English words are found", () =>
      withStore(target, async (store) => {
        await seed(store);
        assert.deepEqual(ids(await store.searchMessages("cafe")), ["m4"]);
        assert.deepEqual(ids(await store.searchMessages("RÉSUMÉ")), ["m4"]);
        assert.deepEqual(ids(await store.searchMessages("配置文件")), ["m5"]);
      }));

    test("results carry role, content, createdAt and sessionId; scoped and store-wide", () =>
      withStore(target, async (store) => {
        await seed(store);
        const scoped = await store.session("s1").searchMessages!("deployment");
        assert.ok(scoped.every((hit) => hit.sessionId === "s1"));
        const [hit] = await store.searchMessages("yesterday");
        assert.equal(hit?.id, "m2");
        assert.equal(hit?.role, "assistant");
        assert.equal(hit?.sessionId, "s1");
        assert.equal(hit?.content, "The deploy script failed yesterday");
        assert.ok(hit?.createdAt && !Number.isNaN(Date.parse(hit.createdAt)));
        const everywhere = await store.searchMessages("deployment");
        assert.deepEqual(new Set(everywhere.map((h) => h.sessionId)), new Set(["s1", "s2"]));
      }));

    test('match "all": the best match ranks first; equal matches come newest first, scoped and store-wide', () =>
      withStore(target, async (store) => {
        const s = store.session("rank");
        await s.appendMessage(msg("r0", "zeta zeta zeta"));
        for (let i = 1; i <= 25; i++) await s.appendMessage(msg(`r${i}`, "zeta alpha"));
        // r0 is the oldest but holds the word three times; the 25 equal ones follow newest first, cut at the limit.
        const expected = ["r0", ...Array.from({ length: 19 }, (_, i) => `r${25 - i}`)];
        const all = { match: "all" } as const;
        assert.deepEqual(ids(await s.searchMessages!("zeta", undefined, all)), expected);
        assert.deepEqual(ids(await store.searchMessages("zeta", all)), expected);
        assert.deepEqual(ids(await store.searchMessages("zeta", { sessionId: "rank", limit: 3, ...all })), [
          "r0",
          "r25",
          "r24",
        ]);
      }));

    test("limit is honoured; a bad limit is INVALID_ARGUMENT, and so is one above 1,000 (never cut short silently)", async () =>
      withStore(target, async (store) => {
        const s = store.session("many");
        for (let i = 0; i < 30; i++) await s.appendMessage(msg(`k${i}`, `kiwi number ${i}`));
        assert.equal((await store.searchMessages("kiwi")).length, 20);
        assert.equal((await store.searchMessages("kiwi", { limit: 5 })).length, 5);
        assert.equal((await store.searchMessages("kiwi", { limit: 0 })).length, 0);
        // Inside one session the page is ranked and cut in one statement on SQL backends: same hits, same order.
        const scoped = await s.searchMessages!("kiwi", 5);
        assert.deepEqual(ids(scoped), ids(await store.searchMessages("kiwi", { limit: 5 })));
        assert.deepEqual(
          ids(await s.searchMessages!("kiwi number 7", 20)),
          ids(await store.searchMessages("kiwi number 7")),
        );
        await assert.rejects(store.searchMessages("kiwi", { limit: -1 }), { code: "INVALID_ARGUMENT" });
        await assert.rejects(store.searchMessages("kiwi", { limit: 1.5 }), { code: "INVALID_ARGUMENT" });
        assert.equal((await store.searchMessages("kiwi", { limit: 1000 })).length, 30);
        const tooMany = { path: "limit", rule: "range" } as const;
        await rejectsWithCode(store.searchMessages("kiwi", { limit: 1001 }), "INVALID_ARGUMENT", tooMany);
        await rejectsWithCode(
          store.searchMessages("kiwi", { limit: 1001, sessionId: "many" }),
          "INVALID_ARGUMENT",
          tooMany,
        );
        await rejectsWithCode(s.searchMessages!("kiwi", 1001), "INVALID_ARGUMENT", tooMany);
      }));

    test("the index follows updates and deletes", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m", "original aardvark"));
        await s.updateMessage(msg("m", "replacement pangolin"));
        assert.deepEqual(await store.searchMessages("aardvark"), []);
        assert.deepEqual(ids(await store.searchMessages("pangolin")), ["m"]);
        await s.deleteMessages(["m"]);
        assert.deepEqual(await store.searchMessages("pangolin"), []);
      }));

    test("branch filter: active path only, or every branch with a flag", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("q", "question about llamas"));
        await s.appendMessage(msg("old", "llamas answer one", "assistant"));
        await s.appendMessage(msg("new", "llamas answer two", "assistant"), "q");
        const all = await store.searchMessages("llamas", { branch: "all" });
        assert.deepEqual(ids(all).sort(), ["new", "old", "q"]);
        assert.equal(all.find((h) => h.id === "old")?.onActivePath, false);
        assert.equal(all.find((h) => h.id === "new")?.onActivePath, true);
        const active = await store.searchMessages("llamas", { branch: "active" });
        assert.deepEqual(ids(active).sort(), ["new", "q"]);
        assert.deepEqual(ids(await s.searchMessages!("llamas", 10, { branch: "active" })).sort(), [
          "new",
          "q",
        ]);
        const scopedAll = await s.searchMessages!("llamas", 10, { branch: "all" });
        assert.deepEqual(ids(scopedAll).sort(), ["new", "old", "q"]);
        assert.equal(scopedAll.find((h) => h.id === "old")?.onActivePath, false);
        assert.equal(scopedAll.find((h) => h.id === "q")?.onActivePath, true);
        await assert.rejects(store.searchMessages("llamas", { branch: "some" as never }), {
          code: "INVALID_ARGUMENT",
        });
      }));
  });
}
