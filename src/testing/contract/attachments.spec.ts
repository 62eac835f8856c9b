import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Session } from "../../session/session.js";
import { hasSessionRegistry, hasTransfer, type TransferItem } from "../../store/types.js";
import type { SessionMessage } from "../../types.js";
import { estimateMessageTokens, IMAGE_TOKENS } from "../../utils/tokens.js";
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
        await rejectsWithCode(s.appendMessage(deep), "INVALID_MESSAGE", /media could not be offloaded/);
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

    test("delete keeps a payload while another row points at it and drops it with the last", () =>
      withStore(target, async (store) => {
        const url = png(20_000, 3);
        const a = store.session("a");
        await a.appendMessage(imageMessage("m1", url));
        await a.appendMessage(imageMessage("m2", url));
        await a.appendMessage(msg("m3"));
        await a.deleteMessages(["m1"]);
        await assertStored(store, 1);
        assert.equal(urlOf(await a.getMessage("m2")), url);
        await a.deleteMessages(["m2"]);
        await assertStored(store, 0, 0);
      }));

    test("update swaps payloads: the new one is stored, the old one dropped, a kept one survives", () =>
      withStore(target, async (store) => {
        const one = png(20_000, 4);
        const two = png(20_000, 5);
        const a = store.session("a");
        await a.appendMessage(imageMessage("m1", one));
        await a.updateMessage(imageMessage("m1", one));
        await assertStored(store, 1);
        await a.updateMessage(imageMessage("m1", two));
        await assertStored(store, 1, 20_000);
        assert.equal(urlOf(await a.getMessage("m1")), two);
        await a.updateMessage(msg("m1"));
        await assertStored(store, 0);
      }));

    test("clearing one session keeps the payloads another session still points at", () =>
      withStore(target, async (store) => {
        const shared = png(20_000, 6);
        await store.session("a").appendMessage(imageMessage("m1", shared));
        await store.session("a").appendMessage(imageMessage("m2", png(20_000, 7)));
        await store.session("b").appendMessage(imageMessage("m1", shared));
        await store.session("a").clearMessages();
        await assertStored(store, 1);
        assert.equal(urlOf(await store.session("b").getMessage("m1")), shared);
        await store.session("b").clearMessages();
        await assertStored(store, 0);
      }));

    test("deleting a registered session drops its payloads, not another's", async (t) => {
      await withStore(target, async (store) => {
        if (!hasSessionRegistry(store)) return t.skip("no registry");
        const shared = png(20_000, 8);
        await store.registry.create({ id: "a", name: "a" });
        await store.session("a").appendMessage(imageMessage("m1", shared));
        await store.session("a").appendMessage(imageMessage("m2", png(20_000, 9)));
        await store.session("b").appendMessage(imageMessage("m1", shared));
        await store.registry.delete("a");
        await assertStored(store, 1);
        await store.registry.delete("b");
        await assertStored(store, 0);
      });
    });

    test("export sends each payload once before its first message; import restores it exactly", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return t.skip("no transfer");
        const url = png(50_000, 10);
        const a = store.session("a");
        await a.appendMessage(imageMessage("m1", url));
        await a.appendMessage(imageMessage("m2", url));
        await a.appendMessage(mediaShapes());
        const items: TransferItem[] = [];
        for await (const item of store.transfer.exportSession("a")) items.push(item);
        const kinds = items.map((item) => item.kind);
        assert.deepEqual(kinds.slice(0, 3), ["session", "attachment", "message"]);
        assert.equal(kinds.filter((k) => k === "attachment").length, 10);
        const before = JSON.stringify(await a.getHistory());
        await a.clearMessages();
        await assertStored(store, 0);
        const renamed = items.map((item) =>
          item.kind === "session" ? { ...item, session: { ...item.session, id: "c", info: null } } : item,
        );
        const result = await store.transfer.importSession(toAsync(renamed));
        assert.equal(result.messages.inserted, 3);
        assert.equal(JSON.stringify(await store.session("c").getHistory()), before);
        await assertStored(store, 10);
        // Importing again skips every row and stores nothing twice.
        await store.transfer.importSession(toAsync(renamed));
        await assertStored(store, 10);
        await store.session("c").clearMessages();
        await assertStored(store, 0);
      });
    });

    test("an import of inline media (another tool's file, an older export) offloads it, counted right", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return t.skip("no transfer");
        const shared = png(20_000, 14);
        const at = "2025-01-31T12:00:00.000Z";
        const record = (message: SessionMessage, parentId: string | null): TransferItem => ({
          kind: "message",
          message: {
            id: message.id,
            parentId,
            role: message.role,
            createdAt: at,
            content: JSON.stringify(message),
          },
        });
        const header = (id: string): TransferItem => ({
          kind: "session",
          session: { id, info: null, leafId: null },
        });
        const a = [header("a"), record(imageMessage("m1", shared), null), record(mediaShapes(), "m1")];
        const b = [header("b"), record(imageMessage("m1", shared), null)];
        assert.equal((await store.transfer.importSession(toAsync(a))).messages.inserted, 2);
        assert.equal((await store.transfer.importSession(toAsync(b))).messages.inserted, 1);
        // The shared image once, the nine payloads of mediaShapes once each, all stored as their decoded bytes.
        await assertStored(store, 10, 20_000 + 9 * 3000);
        assert.equal(
          JSON.stringify(await store.session("a").getHistory()),
          JSON.stringify([imageMessage("m1", shared), mediaShapes()]),
        );
        assert.equal(urlOf(await store.session("b").getMessage("m1")), shared);
        // Importing the same inline stream again skips every row and stores nothing twice.
        assert.equal((await store.transfer.importSession(toAsync(a))).messages.skipped, 2);
        await assertStored(store, 10);

        // The rows keep pointers: the export carries each payload once and no message holds one inline.
        const exported: TransferItem[] = [];
        for await (const item of store.transfer.exportSession("a")) exported.push(item);
        assert.equal(exported.filter((item) => item.kind === "attachment").length, 10);
        for (const item of exported) {
          if (item.kind === "message") assert.ok(item.message.content.length < 5_000, "no payload inline");
        }
        // That export imports as it is (pointers kept) and exports again byte for byte.
        const renamed = exported.map((item) => (item.kind === "session" ? header("c") : item));
        assert.equal((await store.transfer.importSession(toAsync(renamed))).messages.inserted, 2);
        const again: TransferItem[] = [];
        for await (const item of store.transfer.exportSession("c")) again.push(item);
        assert.equal(JSON.stringify(again.slice(1)), JSON.stringify(exported.slice(1)));
        await assertStored(store, 10);

        // Deleting sessions keeps a payload while any row points at it and collects it with the last.
        await store.session("a").clearMessages();
        await store.session("c").clearMessages();
        await assertStored(store, 1, 20_000);
        assert.equal(urlOf(await store.session("b").getMessage("m1")), shared);
        await store.session("b").clearMessages();
        await assertStored(store, 0, 0);
      });
    });

    test("an import refuses a payload that does not match its hash or a pointer without its payload", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return t.skip("no transfer");
        await store.session("a").appendMessage(imageMessage("m1", png(20_000, 12)));
        const items: TransferItem[] = [];
        for await (const item of store.transfer.exportSession("a")) items.push(item);
        await store.session("a").clearMessages();
        const header = { kind: "session", session: { id: "x", info: null, leafId: null } } as const;
        const forged = items.map((item) =>
          item.kind === "attachment"
            ? { ...item, attachment: { ...item.attachment, bytes: Buffer.from("evil") } }
            : item,
        );
        await rejectsWithCode(
          store.transfer.importSession(toAsync([header, ...forged.slice(1)])),
          "INVALID_ARGUMENT",
        );
        const withoutPayload = items.filter((item) => item.kind !== "attachment");
        await rejectsWithCode(
          store.transfer.importSession(toAsync([header, ...withoutPayload.slice(1)])),
          "INVALID_ARGUMENT",
        );
        assert.equal(await store.session("x").getMessage("m1"), null);
        await assertStored(store, 0);
      });
    });

    test("an import refuses a message whose payload comes after it in the stream", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return t.skip("no transfer");
        await store.session("a").appendMessage(msg("m0"));
        await store.session("a").appendMessage(imageMessage("m1", png(20_000, 16)));
        const items: TransferItem[] = [];
        for await (const item of store.transfer.exportSession("a")) items.push(item);
        await store.session("a").clearMessages();
        const header = { kind: "session", session: { id: "x", info: null, leafId: null } } as const;
        const attachment = items.filter((item) => item.kind === "attachment");
        const messages = items.filter((item) => item.kind === "message");
        assert.equal(attachment.length, 1);
        // The documented order is the payload before the first message that needs it; after it is an error.
        await rejectsWithCode(
          store.transfer.importSession(toAsync([header, ...messages, ...attachment])),
          "INVALID_ARGUMENT",
          /neither in the stream nor linked from this session/,
        );
        assert.equal(await store.session("x").getMessage("m1"), null);
        await assertStored(store, 0);
        // m0 may have been imported before the refusal (an import is atomic per batch only on some backends).
        await store.transfer.importSession(toAsync([header, ...attachment, ...messages]));
        assert.deepEqual(
          (await store.session("x").getHistory()).map((m) => m.id),
          ["m0", "m1"],
        );
        await assertStored(store, 1, 20_000);
      });
    });

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
