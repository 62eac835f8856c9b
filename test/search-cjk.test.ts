import assert from "node:assert/strict";
import { test } from "node:test";
import { isSingleCjk } from "../src/search/cjk.js";
import { parseQuery } from "../src/search/query.js";
import { recallTerms } from "../src/search/rank.js";
import { tokenize } from "../src/search/tokens.js";

test("the index holds a CJK run as overlapping pairs and its last character; other text as before", () => {
  assert.deepEqual(tokenize("我喜欢吃苹果，昨天。"), [
    "我喜",
    "喜欢",
    "欢吃",
    "吃苹",
    "苹果",
    "果",
    "昨天",
    "天",
  ]);
  assert.deepEqual(tokenize("猫"), ["猫"]);
  assert.deepEqual(tokenize("iPhone15を買った and Straße"), [
    "iphone15",
    "を買",
    "買っ",
    "った",
    "た",
    "and",
    "straße",
  ]);
  // Korean: a word with its particle; the long-vowel mark ー belongs to the katakana run.
  assert.deepEqual(tokenize("사과를 コーヒー"), ["사과", "과를", "를", "コー", "ーヒ", "ヒー", "ー"]);
});

test("a query's CJK run is its pairs, one character a prefix, a phrase lines up with the index", () => {
  assert.deepEqual(
    parseQuery("我喜欢吃苹果"),
    ["我喜", "喜欢", "欢吃", "吃苹", "苹果"].map((word) => ({ kind: "word", word, prefix: null })),
  );
  assert.deepEqual(parseQuery("猫"), [{ kind: "word", word: "猫", prefix: "猫" }]);
  // Ending the phrase, a run drops its last character (its pairs hold it); running on, it keeps it, as indexed.
  assert.deepEqual(parseQuery('"喜欢苹"'), [{ kind: "phrase", words: ["喜欢", "欢苹"] }]);
  assert.deepEqual(parseQuery('"を買った and"'), [
    { kind: "phrase", words: ["を買", "買っ", "った", "た", "and"] },
  ]);
  assert.equal(isSingleCjk("猫"), true);
  assert.equal(isSingleCjk("猫咪"), false);
  assert.equal(isSingleCjk("a"), false);
  // Vietnamese in decomposed form: its combining marks are no CJK (some list Han among their scripts).
  assert.deepEqual(tokenize("Vie\u0323\u0302t Nam"), ["vie\u0323\u0302t", "nam"]);
});

test("a pair counts half a word against the query limit, so a long Chinese question fits as an English one does", () => {
  const question = "你还记得我上个月在东京买的那台相机是什么牌子的吗？我想再买一个镜头，预算大概三千块左右。";
  assert.ok(recallTerms(question).length > 32);
  // 66 distinct characters: 65 pairs, 33 words.
  const run = (n: number) => String.fromCodePoint(...Array.from({ length: n }, (_, i) => 0x4e00 + i));
  assert.equal(parseQuery(run(65)).length, 64);
  assert.throws(() => parseQuery(run(66)), { code: "INVALID_ARGUMENT" });
});
