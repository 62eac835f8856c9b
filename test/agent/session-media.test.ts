import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
});
