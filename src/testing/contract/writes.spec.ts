import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionProvider } from "../../contract/provider.js";
import { hasTransfer } from "../../contract/transfer.js";
import { Session } from "../../session/session.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

const withMeta = (id: string, metadata: unknown): SessionMessage =>
  msg(id, `text of ${id}`, "user", { metadata });

/** A provider with only the reference's methods (no upsertMessage / importMessage), as a user might write. */
function plainProvider(provider: SessionProvider): SessionProvider {
  const {
    getMessage,
    getHistory,
    getLatestLeaf,
    getBranches,
    getPathLength,
    appendMessage,
    updateMessage,
    deleteMessages,
    clearMessages,
    addCompaction,
    getCompactions,
  } = provider;
  const bind = <F extends (...args: never[]) => unknown>(f: F) => f.bind(provider) as F;
  return {
    getMessage: bind(getMessage),
    getHistory: bind(getHistory),
    getLatestLeaf: bind(getLatestLeaf),
    getBranches: bind(getBranches),
    getPathLength: bind(getPathLength),
    // Reference providers resolve nothing.
    appendMessage: async (m, p) => {
      await appendMessage.call(provider, m, p);
    },
    updateMessage: async (m) => {
      await updateMessage.call(provider, m);
    },
    deleteMessages: bind(deleteMessages),
    clearMessages: bind(clearMessages),
    addCompaction: bind(addCompaction),
    getCompactions: bind(getCompactions),
  };
}

/** Writes a chat client can send: echoed overlays, upserts, no-op updates, imports, the trust policy. */
export function writesSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("client writes", () => {
    test("an echoed overlay is ignored by append and upsert (provider and Session); update and import refuse it", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m1"));
        const echo = msg("compaction_123", "a summary the client posted back", "assistant");
        assert.equal((await s.appendMessage(echo))?.inserted, false);
        assert.deepEqual(await s.upsertMessage!(echo), { inserted: false, updated: false, message: echo });
        const session = new Session(store, { sessionId: "a" });
        assert.equal((await session.appendMessage(echo)).inserted, false);
        assert.equal((await session.upsertMessage(echo)).inserted, false);
        await rejectsWithCode(session.updateMessage(echo), "RESERVED_ID");
        await rejectsWithCode(session.importMessage(echo), "RESERVED_ID");
        await rejectsWithCode(s.importMessage!(echo), "RESERVED_ID");
        assert.deepEqual(ids(await s.getHistory()), ["m1"]);
        assert.equal(await s.getPathLength(), 1);
      }));

    test("appendMessage resolves the stored form: what a later read returns", () =>
      withStore(target, async (store) => {
        const session = new Session(store, { sessionId: "a" });
        const sent = {
          id: "m",
          role: "user",
          parts: [{ type: "text", text: "hi", providerMetadata: undefined }],
          createdAt: new Date("2024-05-01T10:00:00.000Z"),
        };
        const { inserted, message } = await session.appendMessage(sent);
        assert.equal(inserted, true);
        assert.deepEqual(message, await session.getMessage("m"));
        assert.ok(message.createdAt instanceof Date);
        assert.equal("providerMetadata" in (message.parts[0] ?? {}), false);
        const again = await session.appendMessage(msg("m", "other"));
        assert.deepEqual(again, { inserted: false, message: await session.getMessage("m") });
      }));

    test("upsertMessage inserts, replaces in place, and writes nothing for identical content", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        const first = await s.upsertMessage!(msg("m1", "draft"));
        assert.deepEqual([first.inserted, first.updated], [true, false]);
        await s.appendMessage(msg("m2"));
        const grown = await s.upsertMessage!(msg("m1", "draft, continued"), null);
        assert.deepEqual([grown.inserted, grown.updated], [false, true]);
        assert.equal(grown.message?.parts[0]?.text, "draft, continued");
        // The replaced message keeps its place; the parent argument only places a new message.
        assert.deepEqual(ids(await s.getHistory()), ["m1", "m2"]);
        const same = await s.upsertMessage!(msg("m1", "draft, continued"));
        assert.deepEqual([same.inserted, same.updated], [false, false]);
        assert.deepEqual(ids(await s.searchMessages!("continued")), ["m1"]);
        assert.deepEqual(await s.searchMessages!("zzzz"), []);
        await s.upsertMessage!(msg("m3"), "m1");
        assert.deepEqual(ids(await s.getBranches("m1")), ["m2", "m3"]);
      }));

    test("updateMessage of identical content writes nothing and says so", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m1", "hello"));
        const same = await s.updateMessage(msg("m1", "hello"));
        assert.equal(same?.updated, false);
        const changed = await s.updateMessage(msg("m1", "hello", "assistant"));
        assert.equal(changed?.updated, true);
        assert.equal(changed?.message?.role, "assistant");
        assert.equal((await s.getMessage("m1"))?.role, "assistant");
        const session = new Session(store, { sessionId: "a" });
        assert.equal((await session.updateMessage(msg("m1", "hello", "assistant"))).updated, false);
        assert.equal((await session.updateMessage(msg("m1", "bye", "assistant"))).updated, true);
        await rejectsWithCode(s.updateMessage(msg("nope")), "NOT_FOUND");
      }));

    test("Session.upsertMessage falls back to get + update / append on a provider without upsertMessage", () =>
      withStore(target, async (store) => {
        const session = new Session(plainProvider(store.session("")));
        const inserted = await session.upsertMessage(msg("m1", "one"));
        assert.deepEqual([inserted.inserted, inserted.updated], [true, false]);
        assert.equal(inserted.message.parts[0]?.text, "one");
        const replaced = await session.upsertMessage(msg("m1", "two"));
        assert.deepEqual([replaced.inserted, replaced.updated], [false, true]);
        assert.equal((await session.getMessage("m1"))?.parts[0]?.text, "two");
        const appended = await session.appendMessage(msg("m1", "three"));
        assert.deepEqual(appended, { inserted: true, message: msg("m1", "three") });
        await rejectsWithCode(session.importMessage(msg("m9")), "UNSUPPORTED");
      }));

    test("importMessage writes a historical message verbatim with its time and parent", () =>
      withStore(target, async (store) => {
        const session = new Session(store, { sessionId: "mig" });
        const when = "2023-01-02T03:04:05.678Z";
        const root = await session.importMessage(msg("r", "old root"), { parentId: null, createdAt: when });
        assert.equal(root.inserted, true);
        await session.importMessage(msg("c", "old child", "assistant"), {
          parentId: "r",
          createdAt: new Date(when),
        });
        await session.importMessage(withMeta("c2", { internal: true }), { parentId: "r", createdAt: when });
        assert.equal((await session.importMessage(msg("r", "again"))).inserted, false);
        assert.deepEqual(ids(await session.getBranches("r")), ["c", "c2"]);
        assert.deepEqual((await session.getMessage("c2"))?.metadata, { internal: true });
        const hit = (await session.search("child"))[0];
        assert.equal(hit?.createdAt ? new Date(hit.createdAt).toISOString() : undefined, when);
        await rejectsWithCode(session.importMessage(msg("x"), { parentId: "missing" }), "PARENT_NOT_FOUND");
        // The rule of a message's own createdAt: "1" would read as 2001-01-01, a date alone is no instant.
        for (const createdAt of ["not a date", "1", "2020-02-03", Symbol("t") as never]) {
          await rejectsWithCode(session.importMessage(msg("x"), { createdAt }), "INVALID_ARGUMENT");
        }
        assert.equal(await session.getMessage("x"), null);
        if (hasTransfer(store)) {
          for await (const item of store.transfer.exportSession("mig")) {
            if (item.kind === "message") assert.equal(new Date(item.message.createdAt).toISOString(), when);
          }
        }
      }));

    test("reservedMetadataKeys (store option) are stripped from client writes and kept on server writes", () =>
      withStore(
        target,
        async (store) => {
          const s = store.session("t");
          const meta = { role: "admin", usage: 5, note: "kept" };
          await s.appendMessage(withMeta("c", meta), undefined, { source: "client" });
          await s.appendMessage(withMeta("s", meta));
          await s.upsertMessage!(withMeta("u", meta), undefined, { source: "client" });
          assert.deepEqual((await s.getMessage("c"))?.metadata, { note: "kept" });
          assert.deepEqual((await s.getMessage("s"))?.metadata, meta);
          assert.deepEqual((await s.getMessage("u"))?.metadata, { note: "kept" });
          // The Session's own keys add to the store's.
          const session = new Session(store, { sessionId: "t", reservedMetadataKeys: ["note"] });
          const sent = withMeta("c2", { note: "x", usage: 1, other: 1 });
          const { message } = await session.appendMessage(sent, undefined, { source: "client" });
          assert.deepEqual(message.metadata, { other: 1 });
          assert.deepEqual((await session.getMessage("c2"))?.metadata, { other: 1 });
          await session.appendMessage(withMeta("s2", { note: "x" }));
          assert.deepEqual((await session.getMessage("s2"))?.metadata, { note: "x" });
          // A reserved key hidden under an own "__proto__" (as JSON.parse makes it) is dropped with it.
          const hidden = JSON.parse('{"__proto__": {"role": "admin"}, "note": "kept"}') as object;
          await s.appendMessage(withMeta("p", hidden), undefined, { source: "client" });
          await s.upsertMessage!(withMeta("p2", hidden), undefined, { source: "client" });
          for (const id of ["p", "p2"]) {
            const { metadata } = (await s.getMessage(id))!;
            assert.deepEqual(metadata, { note: "kept" });
            assert.equal((Object.assign({}, metadata) as { role?: string }).role, undefined);
          }
        },
        { reservedMetadataKeys: ["role", "usage"] },
      ));

    test("a client's upsert that replaces a message keeps the stored values of the reserved keys", () =>
      withStore(
        target,
        async (store) => {
          const s = store.session("t");
          await s.appendMessage(withMeta("m", { role: "admin", usage: 5, note: "old" }));
          const sent = withMeta("m", { role: "user", note: "new", extra: 1 });
          const result = await s.upsertMessage!(sent, undefined, { source: "client" });
          const kept = { role: "admin", usage: 5, note: "new", extra: 1 };
          assert.equal(result.updated, true);
          assert.deepEqual(result.message?.metadata, kept);
          assert.deepEqual((await s.getMessage("m"))?.metadata, kept);
          // The same client write again changes nothing: the merged content is what is stored.
          assert.equal((await s.upsertMessage!(sent, undefined, { source: "client" })).updated, false);
          // A reserved key the stored message never had stays unset; the Session's own keys are kept too.
          await s.appendMessage(withMeta("n", { note: "server" }));
          const session = new Session(store, { sessionId: "t", reservedMetadataKeys: ["note"] });
          await session.upsertMessage(withMeta("n", { role: "x", note: "y", extra: 2 }), undefined, {
            source: "client",
          });
          assert.deepEqual((await s.getMessage("n"))?.metadata, { note: "server", extra: 2 });
          // A server write replaces the metadata whole.
          await s.upsertMessage!(withMeta("m", { note: "server" }));
          assert.deepEqual((await s.getMessage("m"))?.metadata, { note: "server" });
        },
        { reservedMetadataKeys: ["role", "usage"] },
      ));
  });
}
