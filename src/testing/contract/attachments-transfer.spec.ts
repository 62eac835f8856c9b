// Offloaded payloads through export and import: an export carries each payload once, before the first message
// that needs it, and an import restores it exactly; inline media in an imported stream is offloaded as an append
// would; a payload that does not match its hash, or a pointer whose payload is missing or comes later, is refused.
import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode, toAsync, withStore } from "./harness.js";
import { assertStored, imageMessage, mediaShapes, png, urlOf } from "./media-harness.js";

/** Attachments in the transfer stream (skipped without `store.transfer`). */
export function attachmentsTransferSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("attachments", () => {
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
          { path: "content" },
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
  });
}
