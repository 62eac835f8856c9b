// Offloading inline media to the attachment store: every media shape is stored once however many messages and
// sessions hold it and restored byte for byte on every read (a reopen included), counts in token estimates as an
// image rather than its base64, and strings that only look like media or pointers come back as sent; what cannot
// be offloaded (a forged pointer, media nested too deep) is refused. Payload lifetimes are in
// attachments-lifetime.spec.ts, export and import in attachments-transfer.spec.ts.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { SessionMessage } from "../../contract/message.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import { estimateMessageTokens, IMAGE_TOKENS } from "../../message/tokens.js";
import { Session } from "../../session/session.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode, toAsync, withStore } from "./harness.js";
import {
  assertStored,
  attachmentsOf,
  bytesOf,
  imageMessage,
  mediaShapes,
  png,
  urlOf,
} from "./media-harness.js";

/** Inline strings that must come back exactly although they cannot be decoded and re-encoded byte for byte. */
function awkwardShapes(): SessionMessage {
  const canonical = bytesOf(3000, 11).toString("base64");
  return {
    id: "awkward",
    role: "user",
    parts: [
      // Non-canonical base64: line breaks (MIME style) and a missing padding.
      {
        type: "file",
        mediaType: "image/png",
        url: `data:image/png;base64,${canonical.replace(/(.{76})/g, "$1\n")}`,
      },
      { type: "file", mediaType: "image/png", url: `data:image/png;base64,${canonical.slice(0, -2)}` },
      {
        type: "file",
        mediaType: "image/svg+xml",
        url: `data:image/svg+xml;utf8,<svg>${"é".repeat(800)}</svg>`,
      },
      // A lone surrogate cannot be stored as UTF-8: it stays inline.
      { type: "file", mediaType: "image/png", url: `data:image/png;base64,\ud800${canonical}` },
      // A client that sends what looks like a pointer gets that string back, not a payload.
      { type: "file", mediaType: "image/png", url: `attachment:sha256:${"0".repeat(64)};10;b64` },
      { type: "file", mediaType: "image/png", url: "data:image/png;base64,AAAA" },
      { type: "file", mediaType: "text/plain", url: `data:text/plain;base64,${canonical}` },
      { type: "file", mediaType: "image/png", url: "https://example.com/a.png" },
    ],
  } as unknown as SessionMessage;
}

/** The attachment store: offloaded payloads, restored exactly, stored once, counted right. */
export function attachmentsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("attachments", () => {
    test("an inline image is restored byte-identically and stored once for many messages and sessions", () =>
      withStore(target, async (store) => {
        const url = png(100_000, 1);
        const a = store.session("a");
        await a.appendMessage(imageMessage("m1", url));
        await a.appendMessage(msg("m2"));
        await a.appendMessage(imageMessage("m3", url, "assistant"));
        await store.session("b").appendMessage(imageMessage("m1", url));
        await assertStored(store, 1, 100_000);
        const history = await a.getHistory();
        assert.equal(JSON.stringify(history[0]), JSON.stringify(imageMessage("m1", url)));
        assert.equal(JSON.stringify(history[2]), JSON.stringify(imageMessage("m3", url, "assistant")));
        assert.equal(
          JSON.stringify(await a.getMessage("m3")),
          JSON.stringify(imageMessage("m3", url, "assistant")),
        );
        assert.equal(
          JSON.stringify(await a.getLatestLeaf()),
          JSON.stringify(imageMessage("m3", url, "assistant")),
        );
        assert.deepEqual(
          (await a.getBranches("m2")).map((m) => JSON.stringify(m)),
          [JSON.stringify(imageMessage("m3", url, "assistant"))],
        );
        const recent = await a.getRecentHistory!(undefined, 1_000_000);
        assert.equal(JSON.stringify(recent.messages[0]), JSON.stringify(imageMessage("m1", url)));
        const hash = createHash("sha256").update(bytesOf(100_000, 1)).digest("hex");
        assert.deepEqual(Buffer.from((await attachmentsOf(store).get(hash))!), bytesOf(100_000, 1));
      }));

    test("every AI SDK and MCP media shape is offloaded and restored exactly", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(mediaShapes());
        await assertStored(store, 9);
        assert.equal(JSON.stringify(await s.getMessage("shapes")), JSON.stringify(mediaShapes()));
        const stats = await s.getHistoryRowStats!();
        assert.ok(stats[0]!.bytes < 5000, `the row keeps pointers, not payloads (${stats[0]!.bytes} bytes)`);
      }));

    test("token estimates count an image a fixed weight, not its base64, in running totals too", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        for (let i = 0; i < 5; i++) await s.appendMessage(imageMessage(`m${i}`, png(300_000, 20 + i)));
        const history = await s.getHistory();
        const estimate = estimateMessageTokens(history);
        // 400 KB of base64 each would be ~100,000 tokens; an image is IMAGE_TOKENS plus a few for its text.
        assert.ok(estimate < 5 * (IMAGE_TOKENS + 50), `estimate ${estimate}`);
        assert.ok(estimate >= 5 * IMAGE_TOKENS, `estimate ${estimate}`);
        assert.equal(await s.getContextTokens!(), estimate, "running totals agree with a re-estimate");
      }));

    test("non-canonical base64, text data URLs, look-alike pointers and tiny payloads come back as sent", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(awkwardShapes());
        assert.equal(JSON.stringify(await s.getMessage("awkward")), JSON.stringify(awkwardShapes()));
        assert.equal(JSON.stringify((await s.getHistory())[0]), JSON.stringify(awkwardShapes()));
      }));

    test("raw base64 in the URL-safe alphabet, wrapped at any width or after a line break is stored once", () =>
      withStore(target, async (store) => {
        const base64 = bytesOf(3000, 18).toString("base64");
        const forms = [
          base64.replace(/\+/g, "-").replace(/\//g, "_"),
          base64.replace(/(.{60})/g, "$1\n"),
          `\n${base64}`,
        ];
        const message = (id: string): SessionMessage =>
          ({
            id,
            role: "assistant",
            parts: forms.map((data) => ({ type: "image-data", data, mediaType: "image/png" })),
          }) as unknown as SessionMessage;
        const s = store.session("a");
        await s.appendMessage(message("m1"));
        await s.appendMessage(message("m2"));
        await assertStored(store, 3);
        const history = await s.getHistory();
        assert.deepEqual(
          history.map((m) => JSON.stringify(m)),
          [JSON.stringify(message("m1")), JSON.stringify(message("m2"))],
        );
        const stats = await s.getHistoryRowStats!();
        assert.ok(stats[1]!.bytes < 1000, `the row keeps pointers, not payloads (${stats[1]!.bytes} bytes)`);
      }));

    test("a pointer look-alike that cannot be offloaded is refused: no read swaps in another session's payload", () =>
      withStore(target, async (store) => {
        const bytes = bytesOf(20_000, 15);
        await store
          .session("b")
          .appendMessage(imageMessage("secret", `data:image/png;base64,${bytes.toString("base64")}`));
        const hash = createHash("sha256").update(bytes).digest("hex");
        // A lone surrogate has no UTF-8, so this string could only have stayed inline, where it parses as a pointer.
        const forged = imageMessage("m1", `attachment:sha256:${hash};10;data:\ud800,`);
        const a = store.session("a");
        await a.appendMessage(msg("m1", "original"));
        await rejectsWithCode(
          a.appendMessage(imageMessage("m2", urlOf(forged) as string)),
          "INVALID_MESSAGE",
        );
        await rejectsWithCode(a.upsertMessage!(forged), "INVALID_MESSAGE");
        await rejectsWithCode(a.updateMessage(forged), "INVALID_MESSAGE");
        const session = Session.create(store).forSession("a");
        await rejectsWithCode(session.upsertMessage(forged), "INVALID_MESSAGE");
        if (a.importMessage)
          await rejectsWithCode(
            a.importMessage(imageMessage("m3", urlOf(forged) as string)),
            "INVALID_MESSAGE",
          );
        assert.equal(JSON.stringify(await a.getHistory()), JSON.stringify([msg("m1", "original")]));
        await assertStored(store, 1, 20_000);
      }));

    test("media nested deeper than offloading can walk is refused with INVALID_MESSAGE, on append and import", async (t) => {
      const depth = offloadOverflowDepth();
      if (depth === null) return t.skip("this engine's stack has no depth where only the replacer overflows");
      let value: unknown = {
        type: "image-data",
        data: bytesOf(3000, 17).toString("base64"),
        mediaType: "image/png",
      };
      for (let i = 0; i < depth; i++) value = [value];
      const deep = {
        id: "deep",
        role: "assistant",
        parts: [{ type: "tool-x", toolCallId: "c", state: "output-available", input: {}, output: value }],
      } as SessionMessage;
      await withStore(target, async (store) => {
        const s = store.session("a");
        await rejectsWithCode(s.appendMessage(deep), "INVALID_MESSAGE", { path: "parts" });
        if (hasTransfer(store)) {
          const items: TransferItem[] = [
            { kind: "session", session: { id: "b", info: null, leafId: null } },
            {
              kind: "message",
              message: {
                id: "deep",
                parentId: null,
                role: "assistant",
                createdAt: "2025-01-31T12:00:00.000Z",
                content: JSON.stringify(deep),
              },
            },
          ];
          await rejectsWithCode(store.transfer.importSession(toAsync(items)), "INVALID_MESSAGE");
        }
        assert.deepEqual(await s.getHistory(), []);
        assert.equal(await store.session("b").getMessage("deep"), null);
        await assertStored(store, 0);
      });
    });

    test("a payload larger than a Durable Object value is stored and restored", () =>
      withStore(target, async (store) => {
        const url = png(3_000_000, 2);
        await store.session("a").appendMessage(imageMessage("big", url));
        await assertStored(store, 1, 3_000_000);
        assert.equal(urlOf(await store.session("a").getMessage("big")), url);
      }));

    test("payloads survive a reopen", async (t) => {
      if (!target.reopen) return t.skip("in-process store");
      const url = png(20_000, 13);
      let store = await target.create();
      try {
        await store.session("a").appendMessage(imageMessage("m1", url));
        store = await target.reopen(store);
        assert.equal(
          JSON.stringify(await store.session("a").getMessage("m1")),
          JSON.stringify(imageMessage("m1", url)),
        );
        await assertStored(store, 1);
      } finally {
        if (target.destroy) await target.destroy(store);
        else await store.close();
      }
    });
  });
}

/**
 * A nesting depth that plain `JSON.stringify` serialises here but a stringify with a replacer (as offloading runs)
 * overflows on, with room to spare both ways (the store calls them a few frames deeper); null when none is found.
 */
function offloadOverflowDepth(): number | null {
  const fits = (depth: number, replacer?: (key: string, value: unknown) => unknown): boolean => {
    let value: unknown = "leaf";
    for (let i = 0; i < depth; i++) value = [value];
    try {
      JSON.stringify(value, replacer);
      return true;
    } catch {
      return false;
    }
  };
  for (let depth = 500; depth < 100_000; depth += 250) {
    if (fits(depth, (_, v) => v)) continue;
    // The replacer's limit is about half the plain one on V8: aim between them.
    const target = Math.ceil(depth * 1.3);
    return fits(Math.ceil(target * 1.2)) ? target : null;
  }
  return null;
}
