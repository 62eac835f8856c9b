// sessionMemory on each provider spec the AI SDK hands a middleware: ai@6 a LanguageModelV3 call, ai@7 a V4 call
// (tagged file data: `{ type: "data", data }`, `{ type: "url", url }`) whether the app's model is V3 or V4.
// Files are stored in one form (src/ai-majors.ts), so a session written under one major reads the same under the
// other, and each call gets them in its own spec's form. ai@6 has no V4 model: that case is skipped there.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, type LanguageModel, wrapLanguageModel } from "ai";
import * as aiTest from "ai/test";
import { sessionMemory } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session } from "../../src/index.js";
import { AI_MAJOR } from "../helpers/ai-version.js";

type Prompt = Array<{ role: string; content: unknown }>;
type MockOptions = ConstructorParameters<typeof aiTest.MockLanguageModelV3>[0];
const V4 = (aiTest as unknown as Record<string, (new (options: MockOptions) => LanguageModel) | undefined>)
  .MockLanguageModelV4;

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PDF = "https://example.com/a.pdf";

/** A model of the given spec that records each call's prompt and answers "seen". */
function recordingModel(spec: "v3" | "v4", prompts: Prompt[]): LanguageModel {
  const options: MockOptions = {
    supportedUrls: { "application/pdf": [/^https:\/\//] },
    doGenerate: async (call) => {
      prompts.push(call.prompt as Prompt);
      return {
        content: [{ type: "text", text: "seen" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      };
    },
  };
  return spec === "v4" && V4 !== undefined ? new V4(options) : new aiTest.MockLanguageModelV3(options);
}

/** The file parts of a prompt's user messages: [mediaType, data] with data as its spec puts it. */
function files(prompt: Prompt | undefined): unknown[] {
  return (prompt ?? []).flatMap((message) =>
    message.role === "user" && Array.isArray(message.content)
      ? (message.content as Array<{ type: string; mediaType?: string; data?: unknown }>)
          .filter((part) => part.type === "file")
          .map((part) => [part.mediaType, part.data])
      : [],
  );
}

/** Two turns through the memory: the first sends an image (bytes) and a PDF (a URL), the second only text. */
async function twoTurns(spec: "v3" | "v4") {
  const store = new MemoryStore();
  const prompts: Prompt[] = [];
  const model = wrapLanguageModel({
    model: recordingModel(spec, prompts) as never,
    middleware: sessionMemory({ store, sessionId: "files" }),
  });
  await generateText({
    model,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "file", data: PNG, mediaType: "image/png" },
          { type: "file", data: new URL(PDF), mediaType: "application/pdf" },
        ],
      },
    ],
  });
  await generateText({ model, prompt: "again" });
  const history = await Session.create(store).forSession("files").getHistory();
  const stored = history.map(({ role, parts, metadata }) => ({ role, parts, metadata }));
  return { prompts, stored };
}

// What a model is given: V3 the stored form as it is, V4 tagged.
const BASE64 = "iVBORw0KGgo=";
const asV3 = [
  ["image/png", BASE64],
  ["application/pdf", new URL(PDF)],
];
const asV4 = [
  ["image/png", { type: "data", data: BASE64 }],
  ["application/pdf", { type: "url", url: new URL(PDF) }],
];

describe(`sessionMemory's files on ai@${AI_MAJOR}`, () => {
  test("a V3 model: stored once, given back from the store in the call's spec", async () => {
    const { prompts, stored } = await twoTurns("v3");
    // The second call's first user message is the stored one (the first call's is the app's own); on ai@7 the
    // middleware gave it in V4's form, which the SDK turned back into V3's for this model.
    assert.deepEqual(files(prompts[1]), asV3);
    assert.equal(stored.length, 4);
  });

  test("a V4 model (ai@7): the same stored form as a V3 model's", {
    skip: V4 === undefined && "ai@6 has no LanguageModelV4",
  }, async () => {
    const v3 = await twoTurns("v3");
    const v4 = await twoTurns("v4");
    assert.deepEqual(files(v4.prompts[1]), asV4);
    const clean = (value: unknown) =>
      JSON.parse(JSON.stringify(value).replace(/"(id|createdAt|at)":("[^"]*"|\d+)/g, '"$1":0'));
    assert.deepEqual(clean(v4.stored), clean(v3.stored));
  });
});
