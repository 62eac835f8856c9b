import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

// ASCII, 2-, 3- and 4-byte characters (a surrogate pair): wherever a value limit cuts the JSON, some cut lands
// next to a pair, and a split that broke one would not read back identically.
const MIXED = "plain ascii text, é ü, 中文字符, 😀🎉 ";

/** Text of exactly `units` UTF-16 units (never ending inside a surrogate pair), starting with `lead`. */
function bigText(lead: string, units: number): string {
  const body = MIXED.repeat(Math.ceil(units / MIXED.length) + 1);
  let text = `${lead} ${body}`.slice(0, units);
  if (/[\ud800-\udbff]$/.test(text)) text = `${text.slice(0, -1)}x`;
  return text;
}

function toolOutput(id: string, output: string): SessionMessage {
  return {
    id,
    role: "assistant",
    parts: [
      { type: "tool-read_file", toolCallId: `call-${id}`, state: "output-available", input: {}, output },
      { type: "text", text: "done" },
    ],
  };
}

/** True when two messages serialise to the same JSON (cheaper to report than a deep diff of 50 MB). */
function sameJson(actual: SessionMessage | null | undefined, expected: SessionMessage): boolean {
  return actual !== null && actual !== undefined && JSON.stringify(actual) === JSON.stringify(expected);
}

/** Messages of any size round-trip byte-exact; an optional cap refuses, never truncates. */
export function largeSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("large messages", () => {
    // The bar is 50 MB for both kinds, and they take different write paths (a text part is indexed for search, a
    // tool output is not), so each is its own 50 MB message: one message carrying both would be 100 MB, read three
    // times instead of twice. To keep the cost down, the tool output reuses the text's payload (one 50 MB string
    // built, not two) and each expected JSON is serialised once, not per read. Measured against the old 50 MB +
    // 10 MB pair: about 1.4–1.5× its time on SQLite and Postgres, the price of one more 50 MB write and read.
    test("a 50 MB text message and a 50 MB tool output are stored and read back byte-identical", () =>
      withStore(target, async (store) => {
        const s = store.session("big");
        const payload = bigText("needle", 50_000_000);
        const text = msg("t", payload);
        const tool = toolOutput("o", payload);
        const expected = { t: JSON.stringify(text), o: JSON.stringify(tool) };
        const same = (actual: SessionMessage | null | undefined, id: "t" | "o") =>
          actual !== null && actual !== undefined && JSON.stringify(actual) === expected[id];
        await s.appendMessage(text);
        await s.appendMessage(tool);
        assert.ok(same(await s.getMessage("t"), "t"), "getMessage of the 50 MB text");
        assert.ok(same(await s.getLatestLeaf(), "o"), "getLatestLeaf of the 50 MB tool output");
        const history = await s.getHistory();
        assert.deepEqual(ids(history), ["t", "o"]);
        assert.ok(same(history[0], "t") && same(history[1], "o"), "getHistory");
      }));

    test("around the value limit: every size reads back exactly through every read path", () =>
      withStore(target, async (store) => {
        const s = store.session("edge");
        const sizes = [1_999_000, 2_000_500, 4_100_000];
        const leads = ["alphaword", "bravoword", "charlieword"];
        const messages = sizes.map((units, i) => msg(`e${i}`, bigText(leads[i]!, units)));
        for (const m of messages) await s.appendMessage(m, messages[0] === m ? null : "e0");
        const branches = await s.getBranches("e0");
        assert.deepEqual(ids(branches), ["e1", "e2"]);
        assert.ok(sameJson(branches[0], messages[1]!) && sameJson(branches[1], messages[2]!), "getBranches");
        const path = await s.getHistory("e2");
        assert.ok(sameJson(path[0], messages[0]!) && sameJson(path[1], messages[2]!), "getHistory(leaf)");
        const recent = await s.getRecentHistory!("e2", 1, 1);
        assert.deepEqual(ids(recent.messages), ["e2"]);
        assert.ok(sameJson(recent.messages[0], messages[2]!), "getRecentHistory");
        assert.deepEqual(ids(await s.searchMessages!("charlieword")), ["e2"]);
        assert.deepEqual(ids(await s.searchMessages!("bravoword")), ["e1"]);
      }));

    test("update, delete and clear of a split message leave nothing behind", () =>
      withStore(target, async (store) => {
        const s = store.session("w");
        await s.appendMessage(msg("a", "first"));
        const big = msg("b", bigText("grown", 4_500_000));
        await s.appendMessage(msg("b", "small"));
        await s.updateMessage(big);
        assert.ok(sameJson(await s.getMessage("b"), big), "small → big");
        const other = msg("b", bigText("replaced", 3_000_000));
        await s.updateMessage(other);
        assert.ok(sameJson(await s.getMessage("b"), other), "big → other big");
        assert.deepEqual(ids(await s.searchMessages!("replaced")), ["b"]);
        assert.deepEqual(await s.searchMessages!("grown"), []);
        await s.updateMessage(msg("b", "small again"));
        assert.equal((await s.getMessage("b"))?.parts[0]?.text, "small again");
        await s.updateMessage(big);
        await s.appendMessage(msg("c", "after"));
        await s.deleteMessages(["b"]);
        assert.deepEqual(ids(await s.getHistory()), ["a", "c"]);
        // A new message may reuse the deleted one's storage key: it must not inherit its pieces.
        const again = msg("d", bigText("reborn", 2_500_000));
        await s.appendMessage(again);
        assert.ok(sameJson(await s.getMessage("d"), again), "after a delete");
        await s.clearMessages();
        assert.deepEqual(await s.getHistory(), []);
        const fresh = msg("e", bigText("fresh", 2_200_000));
        await s.appendMessage(fresh);
        assert.ok(sameJson(await s.getMessage("e"), fresh), "after a clear");
      }));

    test("export and import carry a split message whole", async () => {
      const big = toolOutput("x", bigText("exported", 4_200_000));
      const items: TransferItem[] = [];
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return;
        const s = store.session("src");
        await s.appendMessage(msg("r", "root"));
        await s.appendMessage(big);
        for await (const item of store.transfer.exportSession("src")) items.push(item);
      });
      if (items.length === 0) return;
      const exported = items.find((i) => i.kind === "message" && i.message.id === "x");
      assert.equal(exported?.kind === "message" && exported.message.content, JSON.stringify(big));
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return;
        async function* stream() {
          yield* items;
        }
        const result = await store.transfer.importSession(stream());
        assert.deepEqual(result.messages, { inserted: 2, skipped: 0 });
        const s = store.session("src");
        assert.ok(sameJson(await s.getMessage("x"), big), "imported");
      });
    });

    test("maxMessageBytes refuses a larger message with TOO_LARGE, metadata included, and stores nothing", () =>
      withStore(
        target,
        async (store) => {
          const s = store.session("cap");
          await rejectsWithCode(s.appendMessage(msg("big", "x".repeat(20_000))), "TOO_LARGE");
          const heavy = msg("meta", "short", "user", { metadata: { blob: "y".repeat(20_000) } });
          await rejectsWithCode(s.appendMessage(heavy), "TOO_LARGE");
          assert.deepEqual(await s.getHistory(), []);
          await s.appendMessage(msg("ok", "x".repeat(5_000)));
          await rejectsWithCode(s.updateMessage(msg("ok", "x".repeat(20_000))), "TOO_LARGE");
          assert.equal((await s.getMessage("ok"))?.parts[0]?.text?.length, 5_000);
        },
        { maxMessageBytes: 10_000 },
      ));
  });
}
