// Recent-history byte budgets as the reads see them: offloaded media counts at the size it reads back, not as the
// pointer its row stores, while a text quoting a pointer is its own size and a quoted data-URL header its payload;
// the floor argument and a leafId still apply, and each row's stats carry its token estimate. The streaming reads
// themselves are in history-stream.spec.ts, the plain recent-history window in recent.spec.ts.
import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import { estimateMessageTokens } from "../../message/tokens.js";
import { Session } from "../../session/session.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";
import { batches, imageMessage, size } from "./history-harness.js";
import { bytesOf } from "./media-harness.js";

/** Recent-history budgets over media and pointers, and the row stats' token estimates. */
export function recentBudgetsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("recent history budgets and row tokens", () => {
    test("the budget counts media as it reads back; the floor argument and a leafId still work", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("t0"));
        await s.appendMessage(imageMessage("i1", 30_000, 1));
        await s.appendMessage(imageMessage("i2", 30_000, 2));
        await s.appendMessage(msg("t3"));
        const readBack = size(imageMessage("i2", 30_000, 2)) + size(msg("t3"));
        const session = new Session(store, { sessionId: "a" });
        const window = await session.getRecentHistory(readBack + 100);
        assert.deepEqual(ids(window.messages), ["i2", "t3"]);
        assert.equal(JSON.stringify(window.messages[0]), JSON.stringify(imageMessage("i2", 30_000, 2)));
        assert.equal(window.truncated, true);
        const stats = await s.getHistoryRowStats!();
        assert.equal(
          window.totalContentBytes,
          stats.reduce((sum, r) => sum + r.bytes, 0),
        );
        assert.deepEqual(ids((await session.getRecentHistory(1)).messages), ["t3"]);
        assert.deepEqual(ids((await session.getRecentHistory(1, 3)).messages), ["i1", "i2", "t3"]);
        assert.deepEqual(ids((await session.getRecentHistory(1, { minRecentMessages: 2 })).messages), [
          "i2",
          "t3",
        ]);
        await s.appendMessage(msg("b2"), "i1");
        assert.deepEqual(ids((await session.getRecentHistory(1e9, { leafId: "t3" })).messages), [
          "t0",
          "i1",
          "i2",
          "t3",
        ]);
        assert.deepEqual(ids((await session.getRecentHistory(1e9)).messages), ["t0", "i1", "b2"]);
      }));

    test("budgets count only real pointers: a text quoting one is its own size, a quoted data-URL header its payload", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        // A text that quotes a pointer is not restored, so it must not count as the 9,999,999,999 bytes it names.
        const quoting = msg(
          "q",
          `a row holds attachment:sha256:${"0".repeat(64)};9999999999;b64 for an image`,
        );
        const body = bytesOf(3000, 3).toString("base64");
        const quoted = {
          id: "h",
          role: "user",
          parts: [
            { type: "file", mediaType: "image/png", url: `data:image/png;name="a\\b.png";base64,${body}` },
          ],
        } as unknown as SessionMessage;
        for (const m of [msg("t0"), quoted, quoting, msg("t1")]) await s.appendMessage(m);
        const session = new Session(store, { sessionId: "a" });
        const tail = size(quoting) + size(msg("t1"));
        assert.deepEqual(ids((await session.getRecentHistory(tail)).messages), ["q", "t1"]);
        assert.deepEqual(ids((await session.getRecentHistory(tail + size(quoted) - 1)).messages), [
          "q",
          "t1",
        ]);
        assert.deepEqual(ids((await session.getRecentHistory(tail + size(quoted))).messages), [
          "h",
          "q",
          "t1",
        ]);
        const got = await batches(store, { maxBatchBytes: tail, newestFirst: true });
        assert.deepEqual(got.map(ids), [["t1", "q"], ["h"], ["t0"]]);
        assert.equal(JSON.stringify(got[1]?.[0]), JSON.stringify(quoted));
      }));

    test("row stats carry each row's token estimate", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const messages = [
          msg("u", "hello there"),
          msg("a", "é".repeat(300), "assistant"),
          msg("x", "z".repeat(9000)),
        ];
        for (const m of messages) await s.appendMessage(m);
        const stats = await s.getHistoryRowStats!();
        assert.deepEqual(
          stats.map((r) => r.tokens),
          messages.map((m) => estimateMessageTokens([m])),
        );
      }));
  });
}
