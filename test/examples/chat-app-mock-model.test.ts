// The chat example's mock model keeps a bounded number of the prompts it was called with: the AI SDK's mock records
// every call, and the example's server grew from 167 MB to 2.7 GB in three minutes under load.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KEPT_CALLS, mockChatModel } from "../../examples/chat-app/mock-model.js";

test("the mock model keeps only its latest calls", async () => {
  const model = mockChatModel();
  type Options = Parameters<typeof model.doStream>[0];
  for (let i = 0; i < 3 * KEPT_CALLS; i++) {
    const prompt = [{ role: "user", content: [{ type: "text", text: `hello ${i}` }] }];
    const { stream } = await model.doStream({ prompt } as Options);
    await stream.cancel();
  }
  assert.equal(model.doStreamCalls.length, KEPT_CALLS);
  const last = model.doStreamCalls.at(-1)?.prompt.at(-1);
  assert.deepEqual(last?.content, [{ type: "text", text: `hello ${3 * KEPT_CALLS - 1}` }]);
});
