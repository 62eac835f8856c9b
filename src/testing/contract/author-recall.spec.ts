import assert from "node:assert/strict";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";

// Turns that tie on the question's words, each apart from the others (a turn between them matches nothing), said by
// the author each names; Melanie's, said later, ranks first by the words alone.
const TURNS: [id: string, text: string, author: string | undefined][] = [
  ["carol-lake", "I painted the lake at dusk", "Caroline"],
  ["gap1", "Nice weather today", "Melanie"],
  ["dana-lake", "I painted the lake at noon", "Dana Smith"],
  ["gap2", "Dinner was great", "Caroline"],
  ["mel-lake", "I painted the lake at dawn", "Melanie"],
  ["gap3", "See you soon", undefined],
];

/** Appends TURNS to session "a", each with its author as `metadata.author`. */
export async function seedAuthors(store: SessionStore, sessionId = "a"): Promise<void> {
  const s = store.session(sessionId);
  for (const [i, [id, text, author]] of TURNS.entries())
    await s.appendMessage(
      msg(id, text, i % 2 === 0 ? "user" : "assistant", author === undefined ? {} : { metadata: { author } }),
    );
}

/** The questions of the author rule and the order each should give (the sealed-owner tests ask the same). */
export const AUTHOR_QUESTIONS: [question: string, order: string[]][] = [
  // No author named: the words alone, newest first among equal scores.
  ["What was painted at the lake?", ["mel-lake", "dana-lake", "carol-lake"]],
  ["What did Caroline paint at the lake?", ["carol-lake", "mel-lake", "dana-lake"]],
  // An author's name is matched folded, as any word.
  ["what did CAROLINE paint at the lake", ["carol-lake", "mel-lake", "dana-lake"]],
  // Two authors named: they are asked about together, and the order is the words'.
  ["What did Caroline and Melanie paint at the lake?", ["mel-lake", "dana-lake", "carol-lake"]],
  // A name of two words is named only by both.
  ["What did Dana paint at the lake?", ["mel-lake", "dana-lake", "carol-lake"]],
  ["What did Dana Smith paint at the lake?", ["dana-lake", "mel-lake", "carol-lake"]],
];

/** Who said it (docs/RECALL.md#who-said-it): the named author's turns first among turns of the same word counts. */
export function authorRecallSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("who said it", () => {
    test("a question naming one author takes that author's turns before others' that match as many words", () =>
      withStore(target, async (store) => {
        await seedAuthors(store);
        for (const [question, order] of AUTHOR_QUESTIONS)
          assert.deepEqual(
            ids(await store.searchMessages(question, { sessionId: "a", authors: true })),
            order,
            question,
          );
        // Without `authors: true` (the default) no author is read: the words alone.
        for (const authors of [false, undefined])
          assert.deepEqual(
            ids(
              await store.searchMessages("What did Caroline paint at the lake?", {
                sessionId: "a",
                ...(authors === undefined ? {} : { authors }),
              }),
            ),
            ["mel-lake", "dana-lake", "carol-lake"],
          );
      }));

    test("the author never takes a turn above one that matches more of the question's words", () =>
      withStore(target, async (store) => {
        await seedAuthors(store);
        const s = store.session("a");
        await s.appendMessage(
          msg("mel-strong", "Caroline asked me to paint the lake", "assistant", {
            metadata: { author: "Melanie" },
          }),
        );
        await s.appendMessage(msg("gap4", "Bye", "user"));
        const hits = ids(
          await store.searchMessages("What did Caroline paint at the lake?", {
            sessionId: "a",
            authors: true,
          }),
        );
        assert.deepEqual(hits, ["mel-strong", "carol-lake", "mel-lake", "dana-lake"]);
      }));

    test("an author that is no name (not a string, no word) is none; an edit's new author counts", () =>
      withStore(target, async (store) => {
        await seedAuthors(store);
        const s = store.session("a");
        await s.updateMessage(
          msg("carol-lake", "I painted the lake at dusk", "user", { metadata: { author: 7 } }),
        );
        const question = "What did Caroline paint at the lake?";
        assert.deepEqual(ids(await store.searchMessages(question, { sessionId: "a", authors: true })), [
          "mel-lake",
          "dana-lake",
          "carol-lake",
        ]);
        await s.updateMessage(
          msg("mel-lake", "I painted the lake at dawn", "assistant", { metadata: { author: "Caroline" } }),
        );
        await s.updateMessage(
          msg("carol-lake", "I painted the lake at dusk", "user", { metadata: { author: "" } }),
        );
        assert.deepEqual(ids(await store.searchMessages(question, { sessionId: "a", authors: true })), [
          "mel-lake",
          "dana-lake",
          "carol-lake",
        ]);
        // Only Caroline's turn is named now, and it already leads: a question naming Dana Smith moves hers up.
        assert.deepEqual(
          ids(
            await store.searchMessages("What did Dana Smith paint at the lake?", {
              sessionId: "a",
              authors: true,
            }),
          ),
          ["dana-lake", "mel-lake", "carol-lake"],
        );
      }));
  });
}
