import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";
import { CONTEXT_OVER_BUDGET, SEARCH_CONTEXT_BYTES } from "../../search/context.js";
import { DEFAULT_QUERY_LIMITS } from "../../search/limits.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

const { maxQueryChars, maxQueryTerms } = DEFAULT_QUERY_LIMITS;

/** `count` distinct words that no stemming folds together ("w0x", "w1x", …). */
export function distinctWords(count: number): string {
  return Array.from({ length: count }, (_, i) => `w${i}x`).join(" ");
}

/** 20 distinct English function words: ranked recall drops them before counting (search/stopwords.ts). */
const FUNCTION_WORDS = "what when where who which how did does was were the a an of to in on at for with";

/** `word` repeated until the query is just under `chars` characters. */
export function repeated(word: string, chars: number): string {
  return `${word} `.repeat(Math.floor(chars / (word.length + 1)));
}

async function seed(store: SessionStore): Promise<void> {
  const s = store.session("s1");
  await s.appendMessage(msg("m1", "the deployment failed on Friday"));
  await s.appendMessage(msg("m2", "deploying again after the fix"));
  await s.appendMessage(msg("m3", `every word here: ${distinctWords(maxQueryTerms)}`));
}

/** An agent's tool step of about `bytes` bytes: a turn of context whose text is only "done" (it is not indexed). */
function bigToolStep(id: string, bytes: number): SessionMessage {
  const output = "o".repeat(bytes);
  return {
    id,
    role: "assistant",
    parts: [
      { type: "tool-read_file", toolCallId: `call-${id}`, state: "output-available", input: {}, output },
      { type: "text", text: "done" },
    ],
  };
}

/** The bounds on a query's work every backend shares: repeats collapse, length and distinct words are capped. */
export function searchBoundsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search bounds", () => {
    test("repeated words and phrases collapse: the answer is the one-word answer", () =>
      withStore(target, async (store) => {
        await seed(store);
        const once = ids(await store.searchMessages("deployment")).sort();
        assert.deepEqual(once, ["m1", "m2"]);
        const query = repeated("Deployment deployments DEPLOYMENT", maxQueryChars);
        assert.deepEqual(ids(await store.searchMessages(query)).sort(), once);
        assert.deepEqual(ids(await store.searchMessages(repeated('"deployment failed"', maxQueryChars))), [
          "m1",
        ]);
        assert.deepEqual(ids(await store.session("s1").searchMessages!(query)).sort(), once);
      }));

    test("a role or session id no message can hold finds nothing, in both searches", () =>
      withStore(target, async (store) => {
        await seed(store);
        for (const match of ["any", "all"] as const) {
          for (const bad of ["user\u0000", "\uD800"]) {
            assert.deepEqual(await store.searchMessages("deployment", { role: bad, match }), [], match);
            assert.deepEqual(
              await store.searchMessages("deployment", { sessionIds: [bad], match }),
              [],
              match,
            );
            assert.deepEqual(await store.searchMessages("deployment", { sessionId: bad, match }), [], match);
          }
          // One such value among good ones leaves the good ones working.
          const hits = await store.searchMessages("deployment", {
            role: ["user", "x\u0000"],
            sessionIds: ["s1", "\u0000"],
            match,
          });
          assert.ok(
            hits.some((hit) => hit.id === "m1"),
            match,
          );
        }
      }));

    test("a time range of any year a Date can hold is answered, and by its instants", () =>
      withStore(target, async (store) => {
        await store.session("y").appendMessage(msg("y1", "a note from this century"));
        const cases: [Record<string, Date | string>, string[]][] = [
          [{ since: "+010000-01-01T00:00:00.000Z" }, []],
          [{ until: "+010000-01-01T00:00:00.000Z" }, ["y1"]],
          [{ since: "-000001-01-01T00:00:00.000Z" }, ["y1"]],
          [{ until: "-000001-01-01T00:00:00.000Z" }, []],
          [{ since: new Date(-8.64e15), until: new Date(8.64e15) }, ["y1"]],
          [{ until: new Date(-8.64e15) }, []],
        ];
        for (const match of ["any", "all"] as const) {
          for (const [range, expected] of cases) {
            const hits = await store.searchMessages("note", { ...range, match });
            assert.deepEqual(ids(hits), expected, `${match} ${JSON.stringify(range)}`);
          }
        }
      }));

    test("a message imported at a year outside 1–9999 is stored, read back and found by its time", () =>
      withStore(target, async (store) => {
        const y = store.session("y");
        if (!y.importMessage) return;
        const times = { far: "+010000-06-01T00:00:00.000Z", bc: "-000100-06-01T00:00:00.000Z" };
        await y.importMessage(msg("bc", "a note from before the era"), { createdAt: times.bc });
        await y.importMessage(msg("far", "a note from the far future"), { createdAt: times.far });
        const hits = await store.searchMessages("note", { sessionId: "y" });
        assert.deepEqual(Object.fromEntries(hits.map((hit) => [hit.id, hit.createdAt])), times);
        assert.deepEqual(ids(await store.searchMessages("note", { since: "9999-01-01T00:00:00.000Z" })), [
          "far",
        ]);
        assert.deepEqual(ids(await store.searchMessages("note", { until: "0001-01-01T00:00:00.000Z" })), [
          "bc",
        ]);
      }));

    test("a query over the length limit is INVALID_ARGUMENT, on every search path", () =>
      withStore(target, async (store) => {
        await seed(store);
        const long = repeated("deployment", maxQueryChars + 100);
        await rejectsWithCode(store.searchMessages(long), "INVALID_ARGUMENT");
        await rejectsWithCode(store.searchMessages("x".repeat(1_000_000)), "INVALID_ARGUMENT");
        // Asking for no hits does not skip the check: every backend answers a bad query alike.
        await rejectsWithCode(store.searchMessages(long, { limit: 0 }), "INVALID_ARGUMENT");
        await rejectsWithCode(store.session("s1").searchMessages!(long), "INVALID_ARGUMENT");
        if (hasContextStorage(store)) {
          await rejectsWithCode(store.entries.searchEntries("kb", long, 10), "INVALID_ARGUMENT");
        }
      }));

    test("more distinct words than the limit is INVALID_ARGUMENT; the limit itself is answered", () =>
      withStore(target, async (store) => {
        await seed(store);
        assert.deepEqual(ids(await store.searchMessages(distinctWords(maxQueryTerms))), ["m3"]);
        await rejectsWithCode(store.searchMessages(distinctWords(maxQueryTerms + 1)), "INVALID_ARGUMENT");
        // A phrase counts each of its words.
        await rejectsWithCode(
          store.searchMessages(`"${distinctWords(maxQueryTerms)}" extra`),
          "INVALID_ARGUMENT",
        );
        if (hasContextStorage(store)) {
          await rejectsWithCode(
            store.entries.searchEntries("kb", distinctWords(maxQueryTerms + 1), 10),
            "INVALID_ARGUMENT",
          );
        }
      }));

    test("ranked recall counts only the words it searches for: a long question in full sentences is answered", () =>
      withStore(target, async (store) => {
        await seed(store);
        // 40 distinct words, 20 of them function words: ranked recall searches for the other 20.
        const question = `${FUNCTION_WORDS} ${distinctWords(20)}`;
        assert.deepEqual(ids(await store.searchMessages(question)), ["m3"]);
        assert.deepEqual(ids(await store.session("s1").searchMessages!(question)), ["m3"]);
        // Every word counts where every word must match.
        await rejectsWithCode(store.searchMessages(question, { match: "all" }), "INVALID_ARGUMENT");
        await rejectsWithCode(
          store.searchMessages(`${FUNCTION_WORDS} ${distinctWords(maxQueryTerms + 1)}`),
          "INVALID_ARGUMENT",
        );
        if (hasContextStorage(store)) {
          await store.entries.setEntry("kb", "k1", `notes: ${distinctWords(3)}`);
          assert.equal((await store.entries.searchEntries("kb", question, 10)).length, 1);
        }
      }));

    test("a turn next to several hits is one object, read once for the page", () =>
      withStore(target, async (store) => {
        const s = store.session("c");
        await s.appendMessage(msg("a1", "the alpha launch"));
        await s.appendMessage(msg("x", "in between"));
        await s.appendMessage(msg("a2", "the alpha rollback"));
        for (const match of ["any", "all"] as const) {
          const hits = await store.searchMessages("alpha", { context: 1, match });
          const byId = new Map(hits.map((hit) => [hit.id, hit]));
          const after = byId.get("a1")?.context?.after[0];
          assert.equal(after?.content, "in between", match);
          assert.equal(after, byId.get("a2")?.context?.before[0], `${match}: the same object for both hits`);
        }
      }));

    test("context past the search's byte budget is a marker, the turn's id and role kept", () =>
      withStore(target, async (store) => {
        const s = store.session("c");
        // Stored sizes 1 + 3 + 3 MiB before the hit fit the 8 MiB budget; the turn after it would pass it.
        const mib = 1024 * 1024;
        assert.equal(SEARCH_CONTEXT_BYTES, 8 * mib);
        const big = `filler ${"f".repeat(mib)}`;
        await s.appendMessage(msg("t1", big));
        await s.appendMessage(bigToolStep("o1", 3 * mib));
        await s.appendMessage(bigToolStep("o2", 3 * mib));
        await s.appendMessage(msg("n", "the needle"));
        await s.appendMessage(bigToolStep("o3", 3 * mib));
        for (const match of ["any", "all"] as const) {
          const [hit, ...rest] = await store.searchMessages("needle", { context: 10, match });
          assert.equal(rest.length, 0);
          const { before = [], after = [] } = hit?.context ?? {};
          assert.deepEqual(
            before.map((turn) => [turn.id, turn.content.length]),
            [
              ["t1", big.length],
              ["o1", 4],
              ["o2", 4],
            ],
            match,
          );
          assert.deepEqual(after, [
            { id: "o3", role: "assistant", content: CONTEXT_OVER_BUDGET, createdAt: after[0]?.createdAt },
          ]);
          assert.equal(typeof after[0]?.createdAt, "string");
          assert.match(CONTEXT_OVER_BUDGET, /^\[turn not shown: .*8388608 bytes.*smaller limit or context/);
        }
      }));
  });
}
