// Resumable answers' bounds and refusals: an answer over maxChunks is no longer kept (the error is reported and a
// reader is told), a stream whose writer stopped is not rejoined, bad options and storages are refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import { persistChatTurn, resumableStreams } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, SessionError } from "../../src/index.js";
import { events, GatedModel, resumableRoute, until, userMessage } from "./resumable-harness.js";

const get = (id: string) => new Request(`http://chat.test/api/chat/${id}/stream`);
const post = (id: string, text: string) =>
  new Request("http://chat.test/api/chat", {
    method: "POST",
    body: JSON.stringify({ id, messages: [userMessage("u1", text)], trigger: "submit-message" }),
  });

test("an answer over maxChunks is reported, a reader gets what was kept then an error, the answer is stored whole", async () => {
  const store = new MemoryStore();
  const errors: unknown[] = [];
  const streams = resumableStreams({ store, maxChunks: 6, lingerMs: 0, onError: (e) => errors.push(e) });
  const model = new GatedModel();
  const route = resumableRoute(store, streams, model);
  const page = events(await route(post("c", "Go")));
  await model.called;
  model.say("a ", "b ", "c ", "d ", "e ");
  await until(async () => errors.length === 1, "the limit is reported");
  assert.ok(errors[0] instanceof SessionError && errors[0].code === "TOO_LARGE", String(errors[0]));
  const rejoined = await events(await route(get("c")));
  assert.equal(rejoined.length, 7, "the six kept events, then the error");
  assert.deepEqual(rejoined.at(-1), {
    type: "error",
    errorText: "The answer is too long to rejoin: reload when it has finished",
  });
  model.finish();
  await page;
  assert.equal((await store.session("c").getHistory())[1]?.parts.at(-1)?.text, "a b c d e ");
  await until(async () => (await streams.streams.countChunks()) === 0, "the chunks are dropped");
  assert.equal((await route(get("c"))).status, 204);
});

test("a running answer whose writer stopped writing is not rejoined, and the next stream drops it", async () => {
  const store = new MemoryStore();
  const streams = resumableStreams({ store, staleMs: 1000 });
  await store.streams.start("dead", "x", Date.now() - 5000);
  await store.streams.append("dead", "x", [{ seq: 0, chunk: "data: {}\n\n" }], Date.now() - 5000);
  assert.equal((await streams.response("dead")).status, 204);
  const model = new GatedModel();
  const page = events(await resumableRoute(store, streams, model)(post("other", "Hi")));
  await model.called;
  await until(async () => (await store.streams.head("dead")) === null, "the stale stream is expired");
  model.finish();
  await page;
});

test("bad options, a store without kept streams, and a storage that names no session are refused", async () => {
  const store = new MemoryStore();
  for (const [options, path] of [
    [{ store, maxChunks: 0 }, "maxChunks"],
    [{ store, pollMs: 1.5 }, "pollMs"],
    [{ store, lingerMs: -1 }, "lingerMs"],
    [{ store, onError: "no" }, "onError"],
    [{ store, typo: 1 }, "typo"],
  ] as const) {
    assert.throws(
      () => resumableStreams(options as never),
      (error: unknown) =>
        error instanceof SessionError &&
        error.code === "INVALID_ARGUMENT" &&
        error.issues?.[0]?.path === path,
      JSON.stringify(path),
    );
  }
  const { streams: _, ...withoutStreams } = { streams: null, session: () => null };
  assert.throws(
    () => resumableStreams({ store: withoutStreams as never }),
    (error: unknown) => error instanceof SessionError && error.code === "UNSUPPORTED",
  );
  const streams = resumableStreams({ store });
  await assert.rejects(streams.response(""), { code: "INVALID_ARGUMENT" });
  const session = Session.create(store).forSession("s");
  const nameless = {
    getMessage: (id: string) => session.getMessage(id),
    appendMessage: session.appendMessage.bind(session),
    updateMessage: session.updateMessage.bind(session),
    getHistory: (leaf?: string | null) => session.getHistory(leaf),
    getBranches: (id: string) => session.getBranches(id),
  };
  await assert.rejects(
    persistChatTurn(nameless as never, { message: userMessage("u", "hi") }, { resumable: streams }),
    { code: "INVALID_ARGUMENT" },
  );
  assert.deepEqual(await session.getHistory(), [], "nothing stored");
});
