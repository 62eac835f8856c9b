// An AI SDK embedding model as a store's embedder, on the AI SDK major the tests run on: a V3 model (both majors;
// ai@7 wraps it) and a V4 model (ai@7 only; skipped on ai@6, which has none) go through `embedMany`.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as aiTest from "ai/test";
import { MemoryStore, type StoreVectors } from "../../src/index.js";
import { msg } from "../../src/testing/contract/harness.js";
import { AI_MAJOR } from "../helpers/ai-version.js";

type Options = ConstructorParameters<typeof aiTest.MockEmbeddingModelV3>[0];
type Model = { doEmbedCalls: Array<{ values: string[] }> };
const V4 = (aiTest as unknown as Record<string, (new (options: Options) => Model) | undefined>)
  .MockEmbeddingModelV4;

/** A model that puts texts about drinks on one axis and the rest on the other. */
function options(): Options {
  return {
    doEmbed: async ({ values }) => ({
      embeddings: values.map((text) => (/tea|coffee|drink/i.test(text) ? [1, 0.1] : [0.1, 1])),
      warnings: [],
    }),
  };
}

async function nearestTo(model: unknown): Promise<string[]> {
  const store = new MemoryStore({ embedder: model as never });
  try {
    await store.session("a").appendMessage(msg("car", "I drive a car to work"));
    await store.session("a").appendMessage(msg("tea", "Green tea in the morning"));
    const vectors = store.vectors as StoreVectors;
    await vectors.backfill();
    const near = await vectors.nearestMessages("something to drink", { limit: 1 });
    return near.map((n) => n.messageId);
  } finally {
    await store.close();
  }
}

describe(`AI SDK embedding models as embedders on ai@${AI_MAJOR}`, () => {
  test("a V3 model", async () => {
    const model = new aiTest.MockEmbeddingModelV3(options());
    assert.deepEqual(await nearestTo(model), ["tea"]);
    assert.ok(model.doEmbedCalls.some((call) => call.values.includes("something to drink")));
  });

  test("a V4 model (ai@7)", { skip: V4 === undefined && "ai@6 has no EmbeddingModelV4" }, async () => {
    const model = new (V4 as NonNullable<typeof V4>)(options());
    assert.deepEqual(await nearestTo(model), ["tea"]);
    assert.ok(model.doEmbedCalls.some((call) => call.values.includes("something to drink")));
  });
});
