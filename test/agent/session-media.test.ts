import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { modelMessageSchema, tool } from "ai";
import { z } from "zod";
import { createSession, MemorySessionStorage } from "../../src/agent/index.js";
import { scriptedModel } from "./helpers/mock-model.js";
import { collect, stopOf, turn } from "./helpers/session.js";

const image = (data: unknown) => ({ role: "user" as const, content: [{ type: "image", image: data }] });
const file = (data: unknown) => ({
  role: "user" as const,
  content: [{ type: "file", data, mediaType: "image/png" }],
});

describe("agent session: media a model cannot be sent", () => {
  it("send() refuses image and file data that is neither bytes, base64, a data: URL nor an http(s) URL", async () => {
    const storage = new MemorySessionStorage();
    const model = scriptedModel((i) => ({ text: `a${i}` }));
    const session = await createSession({ model, sessionStorage: storage });
    for (const bad of [
      image("%%%not-base64"),
      file("ftp://host/x.png"),
      file("data:image/png;base64,%%%"),
      image(""),
      {
        role: "user",
        parts: [{ type: "file", url: "javascript:alert(1)", mediaType: "image/png", filename: "x" }],
      },
    ]) {
      await assert.rejects(session.send(bad as never), { code: "INVALID_MESSAGE", message: /whose data/ });
    }
    assert.deepEqual((await storage.load(session.id))?.messages, [], "nothing refused was stored");
    for (const good of [
      image("iVBORw0KGgo="),
      file("data:image/png;base64,iVBORw0KGgo="),
      image(new Uint8Array([1])),
    ]) {
      await session.send(good as never);
      assert.equal(stopOf(await collect(session)).reason, "completed");
      assert.equal(stopOf(await turn(session, "next")).reason, "completed");
    }
  });

  it("stores a tool result JSON cannot hold as an error result saying what the tool returned", async () => {
    for (const [returned, described] of [
      [() => 1, "a function"],
      [Symbol("s"), "a symbol"],
    ] as const) {
      const storage = new MemorySessionStorage();
      const odd = tool({ inputSchema: z.object({}), execute: async (): Promise<unknown> => returned });
      const model = scriptedModel((i) =>
        i === 0 ? { toolCalls: [{ id: "c1", name: "odd", input: {} }] } : { text: `ok${i}` },
      );
      const session = await createSession({ model, tools: { odd }, sessionStorage: storage });
      assert.equal(stopOf(await turn(session, "go")).reason, "completed");
      const stored = (await storage.load(session.id))?.messages ?? [];
      for (const message of stored)
        assert.ok(modelMessageSchema.safeParse(message).success, JSON.stringify(message));
      const result = stored.find((message) => message.role === "tool");
      assert.deepEqual((result?.content as Array<{ output: unknown }>)[0]?.output, {
        type: "error-text",
        value: `Tool "odd" returned ${described}, which JSON cannot hold, so its result could not be stored or sent to the model.`,
      });
      // Before, every later call failed: "The messages do not match the ModelMessage[] schema".
      assert.equal(stopOf(await turn(session, "again")).reason, "completed");
    }
  });
});
