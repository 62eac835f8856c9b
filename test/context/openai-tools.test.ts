import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { dropStrictNulls, type JsonSchema, MemoryStore, Session, toStrictSchema } from "../../src/index.js";
import { memorySkills } from "./backends.js";

/** OpenAI's strict-mode rules, checked on every object of a schema. */
function assertStrict(schema: JsonSchema, path = "$"): void {
  for (const variant of (schema.anyOf as JsonSchema[] | undefined) ?? []) assertStrict(variant, path);
  if (schema.items) assertStrict(schema.items as JsonSchema, `${path}[]`);
  const type = schema.type;
  if (type !== "object" && !(Array.isArray(type) && type.includes("object"))) return;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  assert.equal(schema.additionalProperties, false, `${path}: additionalProperties`);
  assert.deepEqual(
    [...((schema.required as string[]) ?? [])].sort(),
    Object.keys(properties).sort(),
    `${path}: required`,
  );
  for (const [key, property] of Object.entries(properties)) assertStrict(property, `${path}.${key}`);
}

function session() {
  return Session.create(new MemoryStore())
    .withContext("memory", { maxTokens: 50 })
    .withContext("notes", { provider: memorySkills({ guide: { content: "The guide" } }) });
}

test("Chat Completions and Responses definitions are strict, optional fields nullable", async () => {
  const s = session();
  const chat = await s.toolDefinitions("openai");
  const responses = await s.toolDefinitions("openai-responses");
  assert.deepEqual(
    responses.map((t) => t.name),
    chat.map((t) => t.function.name),
  );
  for (const [i, tool] of responses.entries()) {
    assert.equal(tool.type, "function");
    assert.equal(tool.strict, true);
    assert.equal(chat[i]!.function.strict, true);
    assert.deepEqual(tool.parameters, chat[i]!.function.parameters);
    assert.equal(tool.description, chat[i]!.function.description);
    assertStrict(tool.parameters);
  }
  const setContext = responses[0]!.parameters.properties as Record<string, JsonSchema>;
  assert.deepEqual(setContext.action?.type, ["string", "null"]);
  assert.deepEqual(setContext.action?.enum, ["replace", "append", null]);
  assert.deepEqual(setContext.label?.type, "string", "required fields stay as they are");
  assert.deepEqual(setContext.metadata?.type, ["object", "null"]);
});

test("executeTool takes both APIs' call shapes and the nulls strict mode sends", async () => {
  const s = session();
  const args = JSON.stringify({ label: "memory", content: "hi", action: null, metadata: null });
  const chatCall = {
    id: "call_1",
    type: "function" as const,
    function: { name: "set_context", arguments: args },
  };
  assert.equal(await s.executeTool(chatCall), "Written to memory. Usage: 4% (2/50 tokens)");
  const append = JSON.stringify({ label: "memory", content: "there", action: "append", metadata: null });
  const responsesCall = {
    type: "function_call" as const,
    call_id: "c2",
    name: "set_context",
    arguments: append,
  };
  assert.match(await s.executeTool(responsesCall), /^Written to memory/);
  await s.ready();
  assert.equal(s.getContextBlock("memory")?.content, "hi\nthere");
  const keyed = JSON.stringify({
    label: "notes",
    content: "Deploy on Thursdays",
    action: null,
    metadata: { title: "deploys", description: null },
  });
  assert.doesNotMatch(
    await s.executeTool({ type: "function_call", name: "set_context", arguments: keyed }),
    /^Error/,
  );
  assert.match(await s.executeTool({ nope: true } as never), /^Error: invalid tool call/);
  assert.match(
    await s.executeTool({ function: { name: "drop", arguments: "{}" } }),
    /^Error: unknown tool "drop"/,
  );
});

test("schemas strict mode cannot express are sent without strict; nullable fields keep their nulls", () => {
  const record = z.toJSONSchema(z.object({ tags: z.record(z.string(), z.string()) })) as JsonSchema;
  assert.equal(toStrictSchema(record), null);
  const union = { type: "object", properties: { x: { oneOf: [{ type: "string" }, { type: "number" }] } } };
  assert.equal(toStrictSchema(union), null);
  const schema = z.toJSONSchema(
    z.object({
      a: z.string().nullable().optional(),
      b: z.string().optional(),
      list: z.array(z.object({ c: z.number().optional() })),
    }),
  ) as JsonSchema;
  const strict = toStrictSchema(schema)!;
  assertStrict(strict);
  assert.deepEqual(dropStrictNulls(schema, { a: null, b: null, list: [{ c: null }, { c: 1 }] }), {
    a: null,
    list: [{}, { c: 1 }],
  });
});
