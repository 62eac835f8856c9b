// An imported pointer names a payload the import itself carries, or one its own session links already: never
// another session's payload, and always with the length its payload restores to (issue 32).
import assert from "node:assert/strict";
import { hasAttachmentStore } from "../../contract/attachments.js";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, rejectsWithCode, toAsync, withStore } from "./harness.js";
import { bytesOf } from "./media-harness.js";

const image = (id: string, seed: number): SessionMessage =>
  ({
    id,
    role: "user",
    parts: [
      {
        type: "file",
        mediaType: "image/png",
        url: `data:image/png;base64,${bytesOf(20_000, seed).toString("base64")}`,
      },
    ],
  }) as unknown as SessionMessage;

async function exported(store: SessionStore, sessionId: string): Promise<TransferItem[]> {
  assert.ok(hasTransfer(store));
  const items: TransferItem[] = [];
  for await (const item of store.transfer.exportSession(sessionId)) items.push(item);
  return items;
}

const header = (id: string): TransferItem => ({ kind: "session", session: { id, info: null, leafId: null } });
const messages = (items: TransferItem[]) => items.filter((item) => item.kind === "message");
const payloads = (items: TransferItem[]) => items.filter((item) => item.kind === "attachment");

/** `item` (a message) with its content rewritten. */
function rewritten(item: TransferItem, edit: (content: string) => string, id?: string): TransferItem {
  assert.ok(item.kind === "message");
  return {
    kind: "message",
    message: { ...item.message, content: edit(item.message.content), ...(id ? { id } : {}) },
  };
}

/** Where an import error names a hash, the hash left out: the rest must not depend on it. */
const withoutHash = (error: unknown) => String((error as Error).message).replace(/[0-9a-f]{64}/g, "<hash>");

export function importPointersSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("import: pointers", () => {
    test("a pointer to another session's payload is refused, with the error an unknown hash gets", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store) || !hasAttachmentStore(store)) return t.skip("no transfer");
        await store.session("owner").appendMessage(image("m1", 31));
        const [stolen] = messages(await exported(store, "owner"));
        assert.ok(stolen);
        const unknown = rewritten(stolen, (content) =>
          content.replace(/sha256:[0-9a-f]{64}/, `sha256:${"ab".repeat(32)}`),
        );
        const errors: string[] = [];
        for (const item of [stolen, unknown]) {
          const refused = store.transfer.importSession(toAsync([header("thief"), item]));
          await rejectsWithCode(refused, "INVALID_ARGUMENT");
          errors.push(withoutHash(await refused.catch((error: unknown) => error)));
        }
        assert.equal(errors[0], errors[1], "the error does not tell whether the hash is stored elsewhere");
        assert.equal(await store.session("thief").getMessage("m1"), null);
        // The owner's delete takes the payload with it: nothing else links it.
        await store.session("owner").clearMessages();
        assert.equal((await store.attachments.stats()).count, 0);
      });
    });

    test("a pointer its own session already links needs no payload in the stream", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return t.skip("no transfer");
        await store.session("s").appendMessage(image("m1", 32));
        const [first] = messages(await exported(store, "s"));
        assert.ok(first?.kind === "message");
        const again = rewritten(first, (content) => content.replace('"id":"m1"', '"id":"m2"'), "m2");
        assert.ok(again.kind === "message");
        again.message.parentId = "m1";
        const result = await store.transfer.importSession(toAsync([header("s"), first, again]));
        assert.equal(result.messages.inserted, 1);
        const m2 = await store.session("s").getMessage("m2");
        assert.deepEqual(m2?.parts, image("m2", 32).parts);
      });
    });

    test("a pointer whose declared length differs from its payload's is refused", async (t) => {
      await withStore(target, async (store) => {
        if (!hasTransfer(store)) return t.skip("no transfer");
        await store.session("a").appendMessage(image("m1", 33));
        const items = await exported(store, "a");
        const [message] = messages(items);
        assert.ok(message);
        const inflated = rewritten(message, (content) =>
          content.replace(/(sha256:[0-9a-f]{64});\d+;/, "$1;1000000000000;"),
        );
        await rejectsWithCode(
          store.transfer.importSession(toAsync([header("b"), ...payloads(items), inflated])),
          "INVALID_ARGUMENT",
          { path: "content", rule: "invalid" },
        );
        assert.equal(await store.session("b").getMessage("m1"), null);
      });
    });
  });
}
