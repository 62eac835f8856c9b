import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { modelMessageSchema, tool } from "ai";
import { z } from "zod";
import { createSession, MemorySessionStorage } from "../../src/agent/index.js";
import { AI_MAJOR } from "../helpers/ai-version.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { promptOf, scriptedModel } from "./helpers/mock-model.js";
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
    for (const [bad, path] of [
      [image("%%%not-base64"), "content.0.image"],
      [file("ftp://host/x.png"), "content.0.data"],
      [file("data:image/png;base64,%%%"), "content.0.data"],
      [image(""), "content.0.image"],
      [
        {
          role: "user",
          parts: [{ type: "file", url: "javascript:alert(1)", mediaType: "image/png", filename: "x" }],
        },
        "parts.0.url",
      ],
    ] as const) {
      await rejectsWithIssue(session.send(bad as never), { code: "INVALID_MESSAGE", path, rule: "invalid" });
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

  it("send() takes a UIMessage file part without a filename (it is optional in a UIMessage)", async () => {
    const model = scriptedModel([{ text: "seen" }]);
    const session = await createSession({ model });
    await session.send({
      role: "user",
      parts: [{ type: "file", url: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png" }],
    });
    assert.equal(stopOf(await collect(session)).reason, "completed");
    assert.deepEqual(session.getMessages()[0]?.content, [
      { type: "file", data: "data:image/png;base64,iVBORw0KGgo=", mediaType: "image/png" },
    ]);
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
      // ai@7 itself sends such an output as JSON null (stored as sent); on ai@6 the runtime stores what it says.
      const output =
        AI_MAJOR === 7
          ? { type: "json", value: null }
          : {
              type: "error-text",
              value: `Tool "odd" returned ${described}, which JSON cannot hold, so its result could not be stored or sent to the model.`,
            };
      assert.deepEqual((result?.content as Array<{ output: unknown }> | undefined)?.[0]?.output, output);
      // Before, every later call failed: "The messages do not match the ModelMessage[] schema".
      assert.equal(stopOf(await turn(session, "again")).reason, "completed");
    }
  });

  it("an image URL that cannot be downloaded is an error event and a note to the model, on this turn and later ones", async () => {
    const model = scriptedModel((i) => ({ text: `a${i}` }));
    const session = await createSession({ model });
    const url = "http://127.0.0.1:9/x.png"; // the AI SDK refuses private addresses: fails at once, offline
    await session.send({
      role: "user",
      content: [
        { type: "text", text: "see" },
        { type: "image", image: url },
      ],
    });
    const events = await collect(session);
    assert.equal(stopOf(events).reason, "completed");
    const errors = events.filter((event) => event.type === "error").map((event) => event.message);
    assert.deepEqual(errors, [
      `Could not download ${url} (URL with IP address 127.0.0.1 is not allowed): the model is sent a note in its place from now on`,
    ]);
    const [user] = session.getMessages();
    const note = `[image ${url} of message ${user?.id} omitted: it could not be downloaded (URL with IP address 127.0.0.1 is not allowed)]`;
    assert.deepEqual(promptOf(model, 0), [{ role: "user", text: `see|${note}` }]);
    const next = await turn(session, "again");
    assert.equal(stopOf(next).reason, "completed");
    assert.deepEqual(
      next.filter((event) => event.type === "error"),
      [],
      "the failed URL is not fetched again",
    );
    assert.equal(promptOf(model, 1)[0]?.text, `see|${note}`);
  });

  it("a stored message that cannot be sent (stored before these checks) becomes a note instead of failing every turn", async () => {
    const storage = new MemorySessionStorage();
    const model = scriptedModel((i) => ({ text: `a${i}` }));
    const first = await createSession({ model, sessionStorage: storage });
    const state = await storage.load(first.id);
    assert.ok(state);
    const at = { createdAt: 1, metadata: {} };
    state.messages.push(
      { id: "m1", ...at, role: "user", content: [{ type: "image", image: "%%%not-base64" }] },
      {
        id: "m2",
        ...at,
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", input: {} }],
      },
      {
        id: "m3",
        ...at,
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "c1", toolName: "t", output: { type: "json" } }],
      } as never,
    );
    await storage.save(state);
    const session = await createSession({ model, sessionStorage: storage, resume: first.id });
    assert.equal(stopOf(await turn(session, "hello")).reason, "completed");
    assert.deepEqual(promptOf(model, 0), [
      {
        role: "user",
        text: "[image of message m1 omitted: its data is neither base64, a data: URL nor an http(s) URL]",
      },
      { role: "assistant", text: "call:t" },
      {
        role: "tool",
        text: `result:t:error-text:${JSON.stringify(`Tool "t"'s stored result is not a valid tool output, so it cannot be sent.`)}`,
      },
      { role: "user", text: "hello" },
    ]);
    assert.equal(stopOf(await turn(session, "more")).reason, "completed");
  });
});
