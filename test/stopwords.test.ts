import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { DEFAULT_QUERY_LIMITS } from "../src/search/limits.js";
import { parseTerms, termsCost } from "../src/search/query.js";
import { recallTerms } from "../src/search/rank.js";
import { isEnglishFunctionWord } from "../src/search/stopwords.js";

/** The content words ranked recall searches for, phrases quoted. */
function content(query: string): string[] {
  return recallTerms(query).map((term) => (term.kind === "word" ? term.word : `"${term.words.join(" ")}"`));
}

test("a question drops the function words of its own language", () => {
  const cases: [query: string, words: string[]][] = [
    ["When did Caroline go to the LGBTQ support group?", ["caroline", "go", "lgbtq", "support", "group"]],
    ["Wann ist Caroline zur Selbsthilfegruppe gegangen?", ["caroline", "selbsthilfegruppe", "gegangen"]],
    [
      "Quand est-ce que Caroline est allée au groupe de soutien ?",
      ["caroline", "allée", "groupe", "soutien"],
    ],
    ["¿Cuándo fue Caroline al grupo de apoyo?", ["caroline", "grupo", "apoyo"]],
    ["Quando è andata Caroline al gruppo di supporto?", ["andata", "caroline", "gruppo", "supporto"]],
    ["Quando a Caroline foi ao grupo de apoio?", ["caroline", "grupo", "apoio"]],
    ["Wanneer ging Caroline naar de steungroep?", ["ging", "caroline", "steungroep"]],
  ];
  for (const [query, words] of cases) assert.deepEqual(content(query), words, query);
});

test("English unless another list holds two words and more than English's: a title or a loanword never switches", () => {
  // One German word ("die") is not German.
  assert.deepEqual(content("Die Hard sequel"), ["die", "hard", "sequel"]);
  // French "son" and "a" against English "of" and "a": a tie is English, and "son" is a word.
  assert.deepEqual(content("son of a gun"), ["son", "gun"]);
  // English words on another list count for English too: "war" and "man" stay, "in" and "the" go.
  assert.deepEqual(content("the man in the war"), ["man", "war"]);
});

test("function words are compared folded; quoted phrases keep every word; stop words alone are nothing", () => {
  assert.deepEqual(content("FÜR wen ist das Geschenk"), ["geschenk"]);
  assert.deepEqual(content("fur wen ist das Geschenk"), ["geschenk"]);
  assert.deepEqual(content('Wann ist "die Gruppe" gegangen?'), ['"die gruppe"', "gegangen"]);
  assert.deepEqual(content("Was ist das, was war da?"), []);
  assert.deepEqual(content("¿Qué es lo que fue?"), []);
  assert.deepEqual(content("what was it?"), []);
});

// Real English text must never switch language: every LoCoMo question, and every turn asked as a query.
const LOCOMO = fileURLToPath(new URL("../../shared/datasets/locomo-dev.json", import.meta.url));
const locomoMissing = existsSync(LOCOMO) ? false : `no LoCoMo data set at ${LOCOMO}`;

test("English questions and turns keep exactly their English content words", { skip: locomoMissing }, () => {
  const data = JSON.parse(readFileSync(LOCOMO, "utf8")) as {
    turns: { text: string }[];
    qa: { question: string }[];
  }[];
  const texts = data.flatMap((conv) => [...conv.qa.map((q) => q.question), ...conv.turns.map((t) => t.text)]);
  let asked = 0;
  for (const text of texts) {
    const english = parseTerms(text).filter(
      (term) => term.kind === "phrase" || !isEnglishFunctionWord(term.word),
    );
    // Ranked recall counts its content words against the word limit; a turn with more is no query.
    if (termsCost(english) > DEFAULT_QUERY_LIMITS.maxQueryTerms) continue;
    asked++;
    assert.deepEqual(recallTerms(text), english, text);
  }
  assert.ok(asked > 3000, `${asked} texts asked`);
});
