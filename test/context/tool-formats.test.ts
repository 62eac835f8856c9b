import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore, Session } from "../../src/index.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { memorySkills } from "./backends.js";

test("OpenAI and Anthropic definitions plus a dispatcher run the same memory", async () => {
  const session = Session.create(new MemoryStore())
    .withContext("memory", { maxTokens: 50 })
    .withContext("skills", { provider: memorySkills({ guide: { content: "The guide" } }) });
  const openai = await session.toolDefinitions("openai");
  assert.deepEqual(
    openai.map((t) => t.function.name),
    ["set_context", "load_context", "unload_context"],
  );
  const setContext = openai[0]!.function.parameters as {
    type: string;
    properties: Record<string, { enum?: string[] }>;
    required: string[];
  };
  assert.equal(setContext.type, "object");
  assert.deepEqual(setContext.properties.label?.enum, ["memory", "skills"]);
  assert.deepEqual(
    setContext.required.sort(),
    ["action", "content", "label", "metadata"],
    "strict: all required",
  );
  assert.ok(!("$schema" in setContext));
  const anthropic = await session.toolDefinitions("anthropic");
  // load_context's optional `offset`: required and nullable in OpenAI's strict form, optional for Anthropic.
  const strictLoad = openai[1]?.function.parameters as { required: string[]; properties: object };
  const plainLoad = anthropic[1]?.input_schema as { required: string[]; properties: object };
  assert.deepEqual(Object.keys(plainLoad.properties), Object.keys(strictLoad.properties));
  assert.deepEqual([...strictLoad.required].sort(), ["key", "label", "offset"]);
  assert.deepEqual([...plainLoad.required].sort(), ["key", "label"]);
  assert.equal(anthropic[1]?.name, "load_context");
  assert.equal(
    await session.executeTool("set_context", '{"label":"memory","content":"hi"}'),
    "Written to memory. Usage: 4% (2/50 tokens)",
  );
  assert.equal(await session.executeTool("load_context", { label: "skills", key: "guide" }), "The guide");
  assert.equal(
    await session.executeTool("set_context", "{not json"),
    "Error: invalid input: the arguments are not valid JSON",
  );
  assert.match(
    await session.executeTool("drop_tables", {}),
    /^Error: unknown tool "drop_tables"\. Available tools: set_context/,
  );
  await assert.rejects(session.toolDefinitions("gemini" as never), { code: "INVALID_ARGUMENT" });
});

test("an unknown tool format is refused at the format", async () => {
  const session = Session.create(new MemoryStore()).withContext("memory", { maxTokens: 50 });
  await rejectsWithIssue(session.toolDefinitions("xml" as never), {
    code: "INVALID_ARGUMENT",
    path: "format",
    rule: "one_of",
  });
});
