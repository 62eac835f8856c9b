import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

/** Append, read back, idempotency, validation. */
export function messagesSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("messages", () => {
    test("empty session reads as empty", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        assert.deepEqual(await s.getHistory(), []);
        assert.equal(await s.getLatestLeaf(), null);
        assert.equal(await s.getMessage("nope"), null);
        assert.equal(await s.getPathLength(), 0);
        assert.deepEqual(await s.getBranches("nope"), []);
        assert.deepEqual(await s.getCompactions(), []);
      }));

    test("append and read back in order", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("u1", "hello"));
        await s.appendMessage(msg("a1", "hi there", "assistant"));
        await s.appendMessage(msg("u2", "how are you"));
        assert.deepEqual(ids(await s.getHistory()), ["u1", "a1", "u2"]);
        assert.equal((await s.getLatestLeaf())?.id, "u2");
        assert.equal(await s.getPathLength(), 3);
        assert.deepEqual(await s.getMessage("a1"), msg("a1", "hi there", "assistant"));
      }));

    test("every field round-trips untouched (metadata, unknown parts, tool parts)", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const message = {
          id: "x",
          role: "assistant",
          metadata: { model: "m", nested: { n: 1, list: [1, "two", null, true] } },
          custom: "kept",
          parts: [
            { type: "step-start" },
            { type: "reasoning", text: "thinking", providerMetadata: { a: { b: 1 } } },
            {
              type: "tool-weather",
              toolCallId: "call-1",
              state: "output-available",
              input: { city: "Paris" },
              output: { temp: 21, unit: "C" },
            },
            {
              type: "dynamic-tool",
              toolName: "x",
              toolCallId: "c2",
              state: "input-available",
              input: [1, 2],
            },
            { type: "data-widget", id: "w", data: { deep: { deeper: "yes" } } },
            { type: "file", mediaType: "image/png", url: "data:image/png;base64,AAAA" },
            { type: "text", text: "done", state: "done" },
          ],
        };
        await s.appendMessage(message);
        assert.deepEqual(await s.getMessage("x"), message);
        assert.deepEqual((await s.getHistory())[0], message);
      }));

    test("createdAt comes back as the same Date", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const createdAt = new Date("2025-01-02T03:04:05.678Z");
        await s.appendMessage(msg("d", "dated", "user", { createdAt }));
        const back = await s.getMessage("d");
        assert.ok(back?.createdAt instanceof Date);
        assert.equal(back.createdAt.toISOString(), createdAt.toISOString());
      }));

    test("unicode and a 1 MB message round-trip", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const unicode = "héllo wörld — 你好，世界 🌍🚀 مرحبا \u0000 zero-width\u200b joiner 👩‍👩‍👧 \uFFFD";
        await s.appendMessage(msg("u", unicode));
        const big = "x".repeat(1024 * 1024);
        await s.appendMessage(msg("big", big));
        assert.equal((await s.getMessage("u"))?.parts[0]?.text, unicode);
        assert.equal((await s.getMessage("big"))?.parts[0]?.text?.length, big.length);
        assert.deepEqual(ids(await s.getHistory()), ["u", "big"]);
      }));

    test("append is idempotent per id: the first content is kept", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const first = await s.appendMessage(msg("m", "first"));
        const second = await s.appendMessage(msg("m", "second"));
        assert.deepEqual(first, { inserted: true, message: msg("m", "first") });
        // The result carries the stored form: the first content, not the one just refused.
        assert.deepEqual(second, { inserted: false, message: msg("m", "first") });
        assert.equal((await s.getMessage("m"))?.parts[0]?.text, "first");
        assert.equal(await s.getPathLength(), 1);
      }));

    test("the message object passed in is not retained (later mutation does not leak)", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const m = msg("m", "original");
        await s.appendMessage(m);
        m.parts[0]!.text = "mutated";
        assert.equal((await s.getMessage("m"))?.parts[0]?.text, "original");
        const read = await s.getMessage("m");
        read!.parts[0]!.text = "changed after read";
        assert.equal((await s.getMessage("m"))?.parts[0]?.text, "original");
      }));

    test("invalid messages are refused with INVALID_MESSAGE and nothing is stored", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const bad: unknown[] = [
          null,
          "text",
          [],
          { role: "user", parts: [] },
          { id: "", role: "user", parts: [] },
          { id: 5, role: "user", parts: [] },
          { id: "x", parts: [] },
          { id: "x", role: "", parts: [] },
          { id: "x", role: "user" },
          { id: "x", role: "user", parts: "nope" },
        ];
        for (const value of bad) {
          await rejectsWithCode(s.appendMessage(value as never), "INVALID_MESSAGE");
        }
        const cyclic: Record<string, unknown> = { id: "c", role: "user", parts: [] };
        cyclic.self = cyclic;
        await rejectsWithCode(s.appendMessage(cyclic as never), "INVALID_MESSAGE");
        assert.equal(await s.getPathLength(), 0);
      }));

    test("a message whose id, role or parts are inherited or hidden is refused on every write, not stored empty", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("x", "original"));
        const hidden = Object.defineProperty({ id: "x", role: "user" }, "parts", {
          value: [],
          enumerable: false,
        });
        // Each with the first field the check finds not its own.
        const forms: [unknown, string][] = [
          [Object.create({ id: "x", role: "user", parts: [] }), "id"],
          [Object.assign(Object.create({ id: "x" }), { role: "user", parts: [] }), "id"],
          [Object.assign(Object.create({ parts: [] }), { id: "x", role: "user" }), "parts"],
          [hidden, "parts"],
        ];
        const at = new Date("2025-01-31T12:00:00.000Z");
        for (const [form, path] of forms) {
          const message = form as SessionMessage;
          const field = { path, rule: "invalid" } as const;
          await rejectsWithCode(s.appendMessage(message), "INVALID_MESSAGE", field);
          await rejectsWithCode(s.upsertMessage!(message), "INVALID_MESSAGE", field);
          await rejectsWithCode(s.updateMessage(message), "INVALID_MESSAGE", field);
          if (s.importMessage) {
            await rejectsWithCode(s.importMessage(message, { createdAt: at }), "INVALID_MESSAGE");
          }
        }
        assert.equal((await s.getMessage("x"))?.parts[0]?.text, "original");
        assert.deepEqual(ids(await s.getHistory()), ["x"]);
      }));

    test("a value JSON stores without its data (Map, Set, ArrayBuffer, typed array) is refused on every write", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("x", "original"));
        const png = new Uint8Array([137, 80, 78, 71]);
        const lossy: [unknown, string][] = [
          [{ type: "file", mediaType: "image/png", data: png }, "parts.0.data"],
          [{ type: "file", mediaType: "image/png", data: png.buffer }, "parts.0.data"],
          [{ type: "file", mediaType: "image/png", data: new Uint8Array(0) }, "parts.0.data"],
          [{ type: "data-cache", data: { seen: new Map([["k", 1]]) } }, "parts.0.data.seen"],
          [{ type: "data-tags", data: [new Set(["a"])] }, "parts.0.data.0"],
        ];
        const at = new Date("2025-01-31T12:00:00.000Z");
        for (const [part, path] of lossy) {
          const pattern = { path, rule: "type" } as const;
          const message = { id: "x", role: "user", parts: [part] } as SessionMessage;
          await rejectsWithCode(s.appendMessage({ ...message, id: "y" }), "INVALID_MESSAGE", pattern);
          await rejectsWithCode(s.upsertMessage!(message), "INVALID_MESSAGE", pattern);
          await rejectsWithCode(s.updateMessage(message), "INVALID_MESSAGE", pattern);
          if (s.importMessage) {
            await rejectsWithCode(
              s.importMessage({ ...message, id: "z" }, { createdAt: at }),
              "INVALID_MESSAGE",
            );
          }
        }
        const inMetadata = { ...msg("y"), metadata: { ids: new Set(["a"]) } } as SessionMessage;
        await rejectsWithCode(s.appendMessage(inMetadata), "INVALID_MESSAGE", { path: "metadata.ids" });
        assert.equal((await s.getMessage("x"))?.parts[0]?.text, "original");
        assert.deepEqual(ids(await s.getHistory()), ["x"]);
        // What JSON keeps whole is stored as before: empty objects, a Date (its toJSON), keys named "0".
        const kept = { ...msg("k"), metadata: { empty: {}, at, numbered: { "0": 1 } } } as SessionMessage;
        await s.appendMessage(kept);
        assert.deepEqual((await s.getMessage("k"))?.metadata, JSON.parse(JSON.stringify(kept.metadata)));
      }));

    test("U+0000 in ids, roles and session ids is refused (no backend could return it intact)", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await rejectsWithCode(s.appendMessage({ id: "a\0b", role: "user", parts: [] }), "INVALID_MESSAGE");
        await rejectsWithCode(s.appendMessage({ id: "ok", role: "us\0er", parts: [] }), "INVALID_MESSAGE");
        await rejectsWithCode(s.appendMessage(msg("m"), "p\0"), "INVALID_ARGUMENT");
        assert.throws(() => store.session("x\0y"), { code: "INVALID_ARGUMENT" });
        await s.appendMessage(msg("nul-text", "text may hold \0 and it survives"));
        assert.equal((await s.getMessage("nul-text"))?.parts[0]?.text, "text may hold \0 and it survives");
      }));

    test("compaction_ ids are reserved: an echoed overlay is ignored on append, refused on update", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const echoed = await s.appendMessage(msg("compaction_abc"));
        assert.equal(echoed?.inserted, false);
        assert.equal(await s.getMessage("compaction_abc"), null);
        await s.appendMessage(msg("m"));
        await rejectsWithCode(s.updateMessage(msg("compaction_abc")), "RESERVED_ID");
        assert.deepEqual(ids(await s.getHistory()), ["m"]);
      }));

    test("updateMessage replaces content and role; unknown id is NOT_FOUND", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m", "before"));
        await s.updateMessage(msg("m", "after", "assistant"));
        const back = await s.getMessage("m");
        assert.equal(back?.parts[0]?.text, "after");
        assert.equal(back?.role, "assistant");
        await rejectsWithCode(s.updateMessage(msg("ghost")), "NOT_FOUND");
        await rejectsWithCode(s.updateMessage({ id: "m" } as never), "INVALID_MESSAGE");
      }));

    test("bad arguments get INVALID_ARGUMENT", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await rejectsWithCode(s.appendMessage(msg("m"), "" as never), "INVALID_ARGUMENT");
        await rejectsWithCode(s.appendMessage(msg("m"), 42 as never), "INVALID_ARGUMENT");
        await rejectsWithCode(s.deleteMessages("m" as never), "INVALID_ARGUMENT");
        await rejectsWithCode(s.deleteMessages([42] as never), "INVALID_ARGUMENT");
        await rejectsWithCode(s.addCompaction(42 as never, "a", "b"), "INVALID_ARGUMENT");
        await rejectsWithCode(s.addCompaction("s", "", "b"), "INVALID_ARGUMENT");
      }));
  });
}
