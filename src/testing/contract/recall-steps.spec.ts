import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";

// An agent's step between a question and its answer: a tool call and its result, neither with searchable text.
function toolCall(id: string): SessionMessage {
  const input = { route: "coast" };
  return {
    id,
    role: "assistant",
    parts: [{ type: "tool-timetable", toolCallId: id, state: "input-available", input }],
  };
}

function toolResult(id: string): SessionMessage {
  const output = { departures: ["07:10", "harbour"] };
  return {
    id,
    role: "tool",
    parts: [{ type: "tool-timetable", toolCallId: id, state: "output-available", output }],
  };
}

/** Appends `steps` tool calls with their results (2 × steps messages without text). */
async function toolSteps(
  store: SessionStore,
  sessionId: string,
  prefix: string,
  steps: number,
): Promise<void> {
  const s = store.session(sessionId);
  for (let i = 0; i < steps; i++) {
    await s.appendMessage(toolCall(`${prefix}call${i}`));
    await s.appendMessage(toolResult(`${prefix}result${i}`));
  }
}

/** Both hits are found, `first` ranked above `then`. */
function assertBefore(hits: readonly string[], first: string, then: string): void {
  const [a, b] = [hits.indexOf(first), hits.indexOf(then)];
  assert.ok(a >= 0 && b >= 0 && a < b, `${first} before ${then}: ${hits.join()}`);
}

/**
 * Ranked recall in an agent's sessions: messages without searchable text (tool calls, tool results, an emoji) are
 * not turns of the conversation, so the exchange and the neighbours' weight pass through them.
 */
export function recallStepsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("ranked recall across an agent's tool steps", () => {
    test("a question and the answer after its tool steps are one exchange; a turn with text still separates", () =>
      withStore(target, async (store) => {
        const s = store.session("steps");
        await s.appendMessage(msg("ask", "Which of the trains go out to the coast this week?"));
        await toolSteps(store, "steps", "a", 2);
        await s.appendMessage(msg("answer", "The early morning one stops right at the harbour", "assistant"));
        // A reply without a word: no turn of text either.
        await s.appendMessage(msg("thumbs", "👍 …"));
        await s.appendMessage(msg("thanks", "Lovely, and the ferry leaves from there in the afternoon"));
        await s.appendMessage(msg("pause", "Sounds good to me", "assistant"));
        // Two short adjacent turns holding two of the words: more relevant than the exchange's long ones.
        await s.appendMessage(msg("pair1", "Harbour busy"));
        await s.appendMessage(msg("pair2", "Ferry late", "assistant"));
        await s.appendMessage(msg("pause2", "Sounds good"));
        // Two short turns apart, with a tool step and then a turn of text between them.
        await s.appendMessage(msg("gap1", "Trains late"));
        await toolSteps(store, "steps", "b", 1);
        await s.appendMessage(msg("gap2", "Nothing else to report", "assistant"));
        await s.appendMessage(msg("gap3", "Harbour closed"));
        const hits = ids(await store.searchMessages("trains harbour ferry", { sessionId: "steps" }));
        // "ask", "answer" and "thanks": all three words in one exchange, through the tool steps and the emoji.
        assert.deepEqual(hits.slice(0, 3).sort(), ["answer", "ask", "thanks"], hits.join());
        assert.deepEqual(hits.slice(3, 5).sort(), ["pair1", "pair2"], hits.join());
        // "gap1" and "gap3" are not joined: "gap2" is a turn of text that matches nothing.
        assert.ok(hits.indexOf("gap1") > 4 && hits.indexOf("gap3") > 4, hits.join());
        assert.ok(!hits.some((id) => id.includes("call") || id.includes("result") || id === "thumbs"));
      }));

    test("the answer's weight reaches the question through the steps, on the active branch as on all", () =>
      withStore(target, async (store) => {
        const s = store.session("w");
        await s.appendMessage(msg("q", "Where do you keep the spare keys?"));
        await toolSteps(store, "w", "a", 1);
        await s.appendMessage(msg("a", "In the blue drawer under the spare towels", "assistant"));
        await s.appendMessage(msg("y", "Keys are on the table"));
        await toolSteps(store, "w", "b", 1);
        await s.appendMessage(msg("x", "We bought new towels", "assistant"));
        for (const branch of ["all", "active"] as const) {
          const hits = ids(await store.searchMessages("spare towels", { sessionId: "w", branch }));
          assert.equal(hits[0], "a", `${branch}: ${hits.join()}`);
          // "x" and "q" each match one word; "q" is next to the best match, across a tool step.
          assertBefore(hits, "q", "x");
        }
      }));

    test("the steps passed through are bounded: a run of 64 messages without text joins, 66 do not", () =>
      withStore(target, async (store) => {
        for (const [sessionId, steps] of [
          ["near", 32],
          ["far", 33],
        ] as const) {
          const s = store.session(sessionId);
          await s.appendMessage(
            msg(`${sessionId}-ask`, "Which of the trains go out to the coast this week?"),
          );
          await toolSteps(store, sessionId, sessionId, steps);
          await s.appendMessage(msg(`${sessionId}-answer`, "It stops at the harbour", "assistant"));
          await s.appendMessage(msg(`${sessionId}-okay`, "Okay then"));
          await s.appendMessage(msg(`${sessionId}-lone`, "Coast", "assistant"));
          await s.appendMessage(msg(`${sessionId}-right`, "Right"));
        }
        // Joined, the question's exchange holds both words and ranks above the short turn holding one of them.
        const near = ids(await store.searchMessages("coast harbour", { sessionId: "near" }));
        assertBefore(near, "near-ask", "near-lone");
        const far = ids(await store.searchMessages("coast harbour", { sessionId: "far" }));
        assertBefore(far, "far-lone", "far-ask");
      }));
  });
}
