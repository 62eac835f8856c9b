// `getToolMessages`: the raw rows of a path that call given tools, root first, exactly as a full read would find
// them (compacted rows, split rows, offloaded media, any spelling of the name JSON allows), and nothing else.
import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionProvider } from "../../contract/provider.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, toAsync, withStore } from "./harness.js";
import { imageMessage, png, urlOf } from "./media-harness.js";

/** An assistant turn calling `tool` (a static part `tool-<name>`, or with `dynamic` a `dynamic-tool` part). */
function call(id: string, tool: string, output: unknown = "done", dynamic = false): SessionMessage {
  const part = dynamic
    ? {
        type: "dynamic-tool",
        toolName: tool,
        toolCallId: `${id}-c`,
        state: "output-available",
        input: {},
        output,
      }
    : { type: `tool-${tool}`, toolCallId: `${id}-c`, state: "output-available", input: {}, output };
  return { id, role: "assistant", parts: [{ type: "text", text: "calling" }, part] };
}

/** The provider's getToolMessages (the test is skipped by the caller when it has none). */
function toolMessagesOf(s: SessionProvider) {
  return s.getToolMessages!.bind(s);
}

/** `getToolMessages` (skipped on a provider without it). */
export function toolMessagesSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("tool messages of a path", () => {
    test("the path's rows calling the tools, root first, whatever their role, compacted or not", async (t) => {
      await withStore(target, async (store) => {
        const s = store.session("a");
        if (!s.getToolMessages) return t.skip("no getToolMessages");
        const read = toolMessagesOf(s);
        await s.appendMessage(msg("u0", "please use load_context and unload_context"));
        await s.appendMessage(call("a0", "load_context"));
        await s.appendMessage(msg("u1", "control \u0001 character, no tool"));
        await s.appendMessage(call("a1", "load_contextual"));
        await s.appendMessage(call("a2", "unload_context", "ok", true));
        await s.appendMessage({ ...call("t3", "load_context"), role: "tool" });
        await s.appendMessage(call("a4", "search"));
        await s.appendMessage(msg("u5"));
        // The branch below u5 is not the active path once "b0" is appended under u1.
        await s.appendMessage(call("b0", "load_context"), "u1");
        await s.appendMessage(msg("u6"), "u5");
        await s.appendMessage(call("a7", "load_context"));
        await s.addCompaction("summary", "u0", "a4");
        assert.deepEqual(ids(await read(["load_context", "unload_context"])), ["a0", "a2", "t3", "a7"]);
        assert.deepEqual(ids(await read(["load_context"])), ["a0", "t3", "a7"]);
        assert.deepEqual(ids(await read(["unload_context", "search"])), ["a2", "a4"]);
        assert.deepEqual(ids(await read(["load_context"], "b0")), ["a0", "b0"]);
        assert.deepEqual(ids(await read(["load_context"], "a2")), ["a0"]);
        assert.deepEqual(await read(["load_context"], "ghost"), []);
        assert.deepEqual(await read(["load_context"], null), await read(["load_context"]));
        assert.deepEqual(await read(["nothing"]), []);
        assert.deepEqual(await toolMessagesOf(store.session("empty"))(["load_context"]), []);
        // Exactly the stored messages, as getMessage returns them.
        assert.deepEqual(await read(["unload_context"]), [await s.getMessage("a2")]);
      });
    });

    test("names with LIKE and JSON metacharacters match exactly", async (t) => {
      await withStore(target, async (store) => {
        const s = store.session("a");
        if (!s.getToolMessages) return t.skip("no getToolMessages");
        const odd = 'a_b%c"d\\e\u00e9\t';
        await s.appendMessage(call("m0", odd));
        await s.appendMessage(call("m1", 'aXb%c"d\\e\u00e9\t'));
        await s.appendMessage(call("m2", "a_b%c"));
        await s.appendMessage(call("m3", "%"));
        assert.deepEqual(ids(await s.getToolMessages([odd])), ["m0"]);
        assert.deepEqual(ids(await s.getToolMessages(["%"])), ["m3"]);
        assert.deepEqual(ids(await s.getToolMessages(["_"])), []);
        assert.deepEqual(ids(await s.getToolMessages(["a_b%c", "a_b%c"])), ["m2"]);
        await s.appendMessage(call("m4", "a*[b]?"));
        await s.appendMessage(call("m5", "a"));
        assert.deepEqual(ids(await s.getToolMessages(["a*[b]?"])), ["m4"]);
        assert.deepEqual(ids(await s.getToolMessages(["?", "[ab]", "*"])), []);
      });
    });

    test("large rows and offloaded media are returned whole", async (t) => {
      await withStore(target, async (store) => {
        const s = store.session("a");
        if (!s.getToolMessages) return t.skip("no getToolMessages");
        const url = png(20_000, 31);
        const document = "é📄 ".repeat(20_000);
        const big = call("big", "load_context", document);
        const image = imageMessage("img", url, "assistant");
        image.parts.push(call("x", "load_context").parts[1]!);
        await s.appendMessage(big);
        await s.appendMessage(image);
        await s.appendMessage(imageMessage("plain", url, "assistant"));
        const found = await s.getToolMessages(["load_context"]);
        assert.deepEqual(ids(found), ["big", "img"]);
        assert.equal(JSON.stringify(found[0]), JSON.stringify(big));
        assert.equal(urlOf(found[1]!), url);
        assert.equal(JSON.stringify(found[1]), JSON.stringify(image));
      });
    });

    test("a row whose JSON spells the name with escapes (an imported file) is found", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store) || !store.session("a").getToolMessages)
          return t.skip("no transfer or getToolMessages");
        const record = (id: string, content: string, parentId: string | null): TransferItem => ({
          kind: "message",
          message: { id, parentId, role: "assistant", createdAt: "2025-01-31T12:00:00.000Z", content },
        });
        const escaped = JSON.stringify(call("e0", "load_context")).replace(
          "load_context",
          "load\\u005fcontext",
        );
        const slashed = JSON.stringify(call("e1", "a/b")).replace("a/b", "a\\/b");
        await store.transfer.importSession(
          toAsync([
            { kind: "session", session: { id: "a", info: null, leafId: null } },
            record("e0", escaped, null),
            record("e1", slashed, "e0"),
          ]),
        );
        const s = store.session("a");
        assert.deepEqual(ids(await s.getToolMessages!(["load_context"])), ["e0"]);
        assert.deepEqual(ids(await s.getToolMessages!(["a/b"])), ["e1"]);
      });
    });

    test("tool names other than 1 to 16 non-empty strings are refused", async (t) => {
      await withStore(target, async (store) => {
        const s = store.session("a");
        if (!s.getToolMessages) return t.skip("no getToolMessages");
        await s.appendMessage(call("m0", "load_context"));
        const many = Array.from({ length: 17 }, (_, i) => `t${i}`);
        for (const bad of [[], "load_context", [""], [1], ["a\u0000"], ["\ud800"], many, null]) {
          await rejectsWithCode(s.getToolMessages(bad as never), "INVALID_ARGUMENT");
        }
        assert.equal((await s.getToolMessages(many.slice(0, 16))).length, 0);
      });
    });
  });
}
