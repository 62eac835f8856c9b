import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";

/** Chinese, Japanese and Korean text: found by its words although they are not separated by spaces. */
export function searchCjkSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search in Chinese, Japanese and Korean", () => {
    test("a word inside a clause is found, in ranked recall, all-words and phrase search", () =>
      withStore(target, async (store) => {
        const s = store.session("cjk");
        await s.appendMessage(msg("zh", "我喜欢吃苹果，昨天买了三个。"));
        await s.appendMessage(msg("zh2", "今天天气很好，我们去公园吧。", "assistant"));
        await s.appendMessage(msg("ja", "東京で新しいカメラを買いました。"));
        await s.appendMessage(msg("ko", "나는 사과를 좋아해요", "assistant"));
        await s.appendMessage(msg("en", "iPhone15を買った and an apple pie"));
        const find = async (query: string, match?: "all") =>
          ids(await store.searchMessages(query, { sessionId: "cjk", ...(match ? { match } : {}) }));
        assert.deepEqual(await find("苹果"), ["zh"]);
        assert.deepEqual(await find("カメラ"), ["ja"]);
        assert.deepEqual(await find("사과"), ["ko"]);
        assert.deepEqual(await find("iphone15"), ["en"]);
        // One character finds itself wherever it stands in a clause: first, inside, last.
        assert.deepEqual(await find("苹"), ["zh"]);
        assert.deepEqual(await find("个"), ["zh"]);
        assert.deepEqual(await find("园"), ["zh2"]);
        // A question shares some of its pairs with the answer (喜欢, 苹果) and ranks it first.
        assert.equal((await find("你喜欢什么水果？苹果吗？"))[0], "zh");
        assert.deepEqual(await find("我喜欢吃苹果", "all"), ["zh"]);
        assert.deepEqual(await find("苹果 公园", "all"), []);
        // A quoted phrase matches the characters next to each other, ending inside a clause or running past it.
        assert.deepEqual(await find('"喜欢吃苹"'), ["zh"]);
        assert.deepEqual(await find('"喜欢苹果"'), []);
        assert.deepEqual(await find('"を買った and"'), ["en"]);
        assert.deepEqual(await find('"apple pie"'), ["en"]);
      }));

    test("search-block entries are found the same way", () =>
      withStore(target, async (store) => {
        assert.ok(hasContextStorage(store), `${store.backend} store has entries`);
        const { entries } = store;
        await entries.setEntry("kb", "水果", "我最喜欢的水果是苹果和香蕉");
        await entries.setEntry("kb", "天气", "明天会下雨");
        assert.deepEqual(
          (await entries.searchEntries("kb", "香蕉")).map((h) => h.key),
          ["水果"],
        );
        assert.deepEqual(
          (await entries.searchEntries("kb", "下雨了吗")).map((h) => h.key),
          ["天气"],
        );
      }));
  });
}
