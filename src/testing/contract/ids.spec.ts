import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode, withStore } from "./harness.js";

/** Ids no backend can store exactly: a lone surrogate (UTF-8 has none; Postgres writes U+FFFD) or U+0000. */
export const UNSTORABLE_IDS = ["a\uD800", "a\uDC00", "\uDBFFz", "a\0b"] as const;

/** Every id that reaches storage is well-formed Unicode without U+0000; reads by any other id find nothing. */
export function idsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("ids", () => {
    test("session ids that are not well-formed are refused", () =>
      withStore(target, async (store) => {
        for (const id of ["tenant\uD800", "tenant\uDC00", "t\0"]) {
          assert.throws(() => store.session(id), { code: "INVALID_ARGUMENT" });
        }
        // U+FFFD itself is a character: a session of its own.
        await store.session("tenant\uFFFD").appendMessage(msg("m1", "secret"));
        assert.equal((await store.session("tenant").getHistory()).length, 0);
      }));

    test("message, parent and compaction ids that are not well-formed are refused; nothing is written", () =>
      withStore(target, async (store) => {
        const s = store.session("s");
        await s.appendMessage(msg("a\uD800\uDC00", "a pair is a character"));
        for (const id of UNSTORABLE_IDS) {
          await rejectsWithCode(s.appendMessage(msg(id)), "INVALID_MESSAGE");
          await rejectsWithCode(s.appendMessage(msg("child"), id), "INVALID_ARGUMENT");
          await rejectsWithCode(s.updateMessage(msg(id)), "INVALID_MESSAGE");
          await rejectsWithCode(s.addCompaction("sum", id, "a\uD800\uDC00"), "INVALID_ARGUMENT");
          await rejectsWithCode(s.deleteMessages([id]), "INVALID_ARGUMENT");
        }
        await rejectsWithCode(s.appendMessage(msg("r", "x", "user\uD800")), "INVALID_MESSAGE");
        assert.deepEqual(
          (await s.getHistory()).map((m) => m.id),
          ["a\uD800\uDC00"],
        );
      }));

    test("reads by an id no row can have answer empty on every backend", () =>
      withStore(target, async (store) => {
        const s = store.session("s");
        await s.appendMessage(msg("a\uFFFD", "the replacement character is an ordinary id"));
        for (const id of UNSTORABLE_IDS) {
          assert.equal(await s.getMessage(id), null);
          assert.deepEqual(await s.getBranches(id), []);
          assert.deepEqual(await s.getHistory(id), []);
          assert.equal(await s.getPathLength(id), 0);
          assert.deepEqual((await s.getHistoryRowStats?.(id)) ?? [], []);
          assert.deepEqual((await s.getRecentHistory?.(id, 1000))?.messages ?? [], []);
          assert.deepEqual(await store.searchMessages("replacement", { sessionId: `s${id}` }), []);
        }
      }));

    test("content with lone surrogates and U+0000 round-trips, in history and in search results", () =>
      withStore(target, async (store) => {
        const text = "lonely \uD800 surrogate \uDC00 and nul \0 stay exactly";
        const s = store.session("s");
        await s.appendMessage(msg("m", text));
        assert.equal((await s.getMessage("m"))?.parts[0]?.text, text);
        const [hit] = await store.searchMessages("lonely surrogate");
        assert.equal(hit?.content, text);
        assert.equal(hit?.id, "m");
      }));

    test("block keys, entry labels and keys that are not well-formed are refused; reads find nothing", async (t) => {
      await withStore(target, async (store) => {
        if (!hasContextStorage(store)) return t.skip("no context storage");
        for (const key of UNSTORABLE_IDS) {
          await rejectsWithCode(store.blocks.setBlock(key, "x"), "INVALID_ARGUMENT");
          await rejectsWithCode(store.entries.setEntry(key, "k", "x"), "INVALID_ARGUMENT");
          await rejectsWithCode(store.entries.setEntry("kb", key, "x"), "INVALID_ARGUMENT");
          assert.equal(await store.blocks.getBlock(key), null);
          await store.blocks.deleteBlocks([key]);
          assert.equal(await store.entries.countEntries(key), 0);
          assert.deepEqual(await store.entries.searchEntries(key, "x"), []);
        }
        await rejectsWithCode(store.blocks.setBlock("", "x"), "INVALID_ARGUMENT");
        assert.equal(await store.blocks.getBlock(""), null);
      });
    });

    test("registry ids that are not well-formed are refused; reads find nothing", async (t) => {
      await withStore(target, async (store) => {
        if (!hasSessionRegistry(store)) return t.skip("no registry");
        await store.registry.create({ id: "t\uFFFD", name: "kept" });
        await store.session("t\uFFFD").appendMessage(msg("m1"));
        for (const id of ["t\uD800", "t\uDC00", "t\0"]) {
          await rejectsWithCode(store.registry.create({ id, name: "x" }), "INVALID_ARGUMENT");
          assert.equal(await store.registry.get(id), null);
          assert.equal(await store.registry.rename(id, "stolen"), null);
          assert.equal(await store.registry.touch(id), false);
          assert.equal(await store.registry.delete(id, { blockKeys: [id] }), false);
        }
        assert.equal((await store.registry.get("t\uFFFD"))?.name, "kept");
        assert.equal((await store.session("t\uFFFD").getLatestLeaf())?.id, "m1");
      });
    });

    test("names are at most 1,024 bytes in UTF-8 (block keys 2,049): the longest is stored, a longer one refused", async (t) => {
      await withStore(target, async (store) => {
        // 1,024 bytes: ASCII, and 341 three-byte characters plus a byte; one more byte is over the limit.
        const longest = ["x".repeat(1024), `${"é".repeat(511)}x`, `${"€".repeat(341)}x`, "😀".repeat(256)];
        const over = ["x".repeat(1025), "é".repeat(513), "€".repeat(342), `${"😀".repeat(256)}x`];
        for (const [i, id] of longest.entries()) {
          const s = store.session(id);
          await s.appendMessage(msg(id, "long names"));
          assert.equal((await s.getMessage(id))?.id, id, `longest ${i}`);
          const [hit] = await store.searchMessages("names", { sessionId: id });
          assert.equal(hit?.id, id);
        }
        const s = store.session("s");
        for (const id of over) {
          assert.throws(() => store.session(id), { code: "INVALID_ARGUMENT" });
          await rejectsWithCode(s.appendMessage(msg(id)), "INVALID_MESSAGE");
          await rejectsWithCode(s.appendMessage(msg("child"), id), "INVALID_ARGUMENT");
          assert.equal(await s.getMessage(id), null);
          assert.deepEqual(await s.getHistory(id), []);
        }
        if (hasSessionRegistry(store)) {
          await store.registry.create({ id: longest[0]!, name: "long" });
          await rejectsWithCode(store.registry.create({ id: over[0]!, name: "x" }), "INVALID_ARGUMENT");
          assert.equal(await store.registry.get(over[0]!), null);
        }
        if (!hasContextStorage(store)) return t.skip("no context storage");
        // A block key is `<label>_<sessionId>`: the longest label and session id make the longest key.
        const key = `${longest[0]}_${longest[3]}`;
        await store.blocks.setBlock(key, "fits");
        assert.equal(await store.blocks.getBlock(key), "fits");
        await rejectsWithCode(store.blocks.setBlock(`${key}x`, "x"), "INVALID_ARGUMENT");
        assert.equal(await store.blocks.getBlock(`${key}x`), null);
        await store.entries.setEntry(longest[1]!, longest[2]!, "fits");
        assert.equal(await store.entries.countEntries(longest[1]!), 1);
        await rejectsWithCode(store.entries.setEntry(over[1]!, "k", "x"), "INVALID_ARGUMENT");
        await rejectsWithCode(store.entries.setEntry("kb", over[2]!, "x"), "INVALID_ARGUMENT");
        await store.blocks.deleteBlocks([key, `${key}x`]);
        assert.equal(await store.blocks.getBlock(key), null);
      });
    });
  });
}
