import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionMessage } from "../../contract/message.js";
import { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode } from "./harness.js";
import { withManager, withRegistryStore } from "./manager-harness.js";

const text = (m: { parts: { text?: string }[] }) => m.parts.map((p) => p.text ?? "").join("");

/** SessionManager message helpers, activity bumps, fork and compactAndSplit. */
export function managerMessagesSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("SessionManager messages", () => {
    test("append, getHistory, getMessageCount, getBranches, getSiblings, deleteMessages, clearMessages", (t) =>
      withManager(t, target, async (manager) => {
        const { id } = await manager.create("chat");
        assert.equal(await manager.append(id, msg("u1", "hello")), "u1");
        await manager.append(id, msg("a1", "first answer", "assistant"));
        await manager.append(id, msg("a2", "second answer", "assistant"), "u1");
        assert.deepEqual(ids(await manager.getHistory(id)), ["u1", "a2"]);
        assert.deepEqual(ids(await manager.getHistory(id, "a1")), ["u1", "a1"]);
        assert.equal(await manager.getMessageCount(id), 2);
        assert.deepEqual(ids(await manager.getBranches(id, "u1")), ["a1", "a2"]);
        await manager.append(id, msg("root", "another root"), null);
        assert.deepEqual(ids(await manager.getHistory(id)), ["root"]);
        const roots = await manager.getSiblings(id, "root");
        assert.deepEqual(roots && [ids(roots.siblings), roots.index], [["u1", "root"], 1]);
        assert.equal((await manager.getSiblings(id, "a2"))?.index, 1);
        assert.equal(await manager.getSiblings(id, "ghost"), null);
        await manager.deleteMessages(id, ["root"]);
        // The deleted tip had no parent: the active path is empty, the other root's branches stay.
        assert.deepEqual(ids(await manager.getHistory(id)), []);
        assert.deepEqual(ids(await manager.getHistory(id, "a2")), ["u1", "a2"]);
        await manager.clearMessages(id);
        assert.deepEqual(await manager.getHistory(id), []);
        assert.equal(await manager.getMessageCount(id), 0);
        assert.notEqual(await manager.get(id), null, "clearing keeps the session");
        await rejectsWithCode(manager.append(id, { id: "", role: "user", parts: [] }), "INVALID_MESSAGE");
        await rejectsWithCode(manager.append(id, msg("x"), "nope"), "PARENT_NOT_FOUND");
      }));

    test("upsert updates in place or appends", (t) =>
      withManager(t, target, async (manager) => {
        const { id } = await manager.create("chat");
        await manager.upsert(id, msg("u1", "draft"));
        await manager.upsert(id, msg("a1", "answer", "assistant"));
        assert.equal(await manager.upsert(id, msg("u1", "final")), "u1");
        const history = await manager.getHistory(id);
        assert.deepEqual(ids(history), ["u1", "a1"]);
        assert.equal(text(history[0]!), "final");
      }));

    test("appendAll chains; without a parent it continues the active branch", (t) =>
      withManager(t, target, async (manager) => {
        const { id } = await manager.create("chat");
        await manager.append(id, msg("u1"));
        assert.equal(await manager.appendAll(id, [msg("a1"), msg("u2"), msg("a2")]), "a2");
        assert.deepEqual(ids(await manager.getHistory(id)), ["u1", "a1", "u2", "a2"]);
        assert.equal(await manager.appendAll(id, [msg("b1"), msg("b2")], "u1"), "b2");
        assert.deepEqual(ids(await manager.getHistory(id)), ["u1", "b1", "b2"]);
        assert.equal(await manager.appendAll(id, [msg("r1")], null), "r1");
        assert.deepEqual(ids(await manager.getHistory(id)), ["r1"]);
        assert.equal(await manager.appendAll(id, []), null);
        assert.equal(await manager.appendAll(id, [], "u1"), "u1");
        await rejectsWithCode(manager.appendAll(id, [msg("ok"), { id: "bad" } as never]), "INVALID_MESSAGE");
        assert.equal(
          await manager.getHistory(id, "ok").then((h) => h.length),
          0,
          "nothing of the batch written",
        );
        await rejectsWithCode(manager.appendAll(id, "x" as never), "INVALID_ARGUMENT");
      }));

    test("appendAll writes nothing when any message would be refused (size, BigInt, cycle, look-alike)", (t) =>
      withManager(
        t,
        target,
        async (manager) => {
          const { id } = await manager.create("chat");
          await manager.append(id, msg("u1"));
          const cyclic: Record<string, unknown> = {};
          cyclic.self = cyclic;
          const lookalike = {
            id: "a2",
            role: "user",
            parts: [
              {
                type: "file",
                mediaType: "image/png",
                url: `attachment:sha256:${"0".repeat(64)};1;data:\ud800,`,
              },
            ],
          };
          const refused: [SessionMessage, string][] = [
            [msg("a2", "x".repeat(5000)), "TOO_LARGE"],
            [msg("a2", "big", "user", { metadata: { n: 1n } }), "INVALID_MESSAGE"],
            [msg("a2", "cycle", "user", { metadata: cyclic }), "INVALID_MESSAGE"],
            [lookalike, "INVALID_MESSAGE"],
          ];
          for (const [bad, code] of refused) {
            await rejectsWithCode(manager.appendAll(id, [msg("a1"), bad, msg("a3")]), code);
            assert.deepEqual(ids(await manager.getHistory(id)), ["u1"], `nothing written before a ${code}`);
          }
        },
        { maxMessageBytes: 2000 },
      ));

    test("appendAll checks the cap of the id's own Session too (the smaller cap decides) and writes nothing", (t) =>
      withManager(
        t,
        target,
        async (manager) => {
          const { id } = await manager.create("chat");
          manager.getSession(id).withMaxMessageBytes(2000);
          const batch = [msg("a1"), msg("a2", "x".repeat(5000)), msg("a3")];
          await rejectsWithCode(manager.appendAll(id, batch), "TOO_LARGE");
          assert.deepEqual(
            await manager.getHistory(id),
            [],
            "nothing written before the message over the cap",
          );
          // A Session cap above the store's does not lift the store's.
          manager.getSession(id).withMaxMessageBytes(1_000_000);
          const over = [msg("b1"), msg("b2", "x".repeat(20_000))];
          await rejectsWithCode(manager.appendAll(id, over), "TOO_LARGE");
          assert.deepEqual(await manager.getHistory(id), []);
          assert.equal(await manager.appendAll(id, batch), "a3");
        },
        { maxMessageBytes: 10_000 },
      ));

    test("appendAll refuses an id given twice in one call and writes nothing", (t) =>
      withManager(t, target, async (manager) => {
        const { id } = await manager.create("chat");
        const batch = [msg("x", "one"), msg("y", "two"), msg("x", "three"), msg("z", "four")];
        await rejectsWithCode(manager.appendAll(id, batch), "INVALID_ARGUMENT", {
          path: "messages.2.id",
          rule: "conflict",
        });
        assert.deepEqual(await manager.getHistory(id), []);
        // An echoed overlay is ignored, so it may repeat.
        const echoes = [msg("compaction_1"), msg("a"), msg("compaction_1"), msg("b")];
        assert.equal(await manager.appendAll(id, echoes), "b");
        assert.deepEqual(ids(await manager.getHistory(id)), ["a", "b"]);
      }));

    test("every write bumps the session's activity, through the manager or its Session; reads do not", (t) =>
      withManager(t, target, async (manager) => {
        const a = await manager.create("a");
        const b = await manager.create("b");
        await manager.append(a.id, msg("m1"));
        await manager.append(a.id, msg("m2"));
        const newest = async () => (await manager.list())[0]?.id;
        const writes: [string, () => Promise<unknown>][] = [
          ["append", () => manager.append(a.id, msg("m3"))],
          ["upsert", () => manager.upsert(a.id, msg("m3", "changed"))],
          ["appendAll", () => manager.appendAll(a.id, [msg("m4")])],
          ["deleteMessages", () => manager.deleteMessages(a.id, ["m4"])],
          ["addCompaction", () => manager.addCompaction(a.id, "s", "m1", "m1")],
          ["session.appendMessage", () => manager.getSession(a.id).appendMessage(msg("m5"))],
          ["session.updateMessage", () => manager.getSession(a.id).updateMessage(msg("m5", "x"))],
          ["clearMessages", () => manager.clearMessages(a.id)],
          ["addUsage", () => manager.addUsage(a.id, 1, 1, 0)],
          ["rename", () => manager.rename(a.id, "a2")],
        ];
        for (const [name, write] of writes) {
          await manager.append(b.id, msg(`b-${name}`));
          assert.equal(await newest(), b.id);
          await write();
          assert.equal(await newest(), a.id, `${name} bumps activity`);
        }
        await manager.append(b.id, msg("b-last"));
        await manager.getHistory(a.id);
        await manager.getMessageCount(a.id);
        await manager.getBranches(a.id, "m1");
        await manager.getCompactions(a.id);
        await manager.search("m1", { sessionId: a.id });
        await manager.get(a.id);
        assert.equal(await newest(), b.id, "reads leave the order alone");
      }));

    test("fork: history up to the message with overlays applied, fresh ids, parent recorded", (t) =>
      withManager(t, target, async (manager) => {
        const source = await manager.create("source", { model: "m", source: "web" });
        await manager.appendAll(source.id, [
          msg("u1", "one"),
          msg("a1", "two"),
          msg("u2", "three"),
          msg("a2", "four"),
        ]);
        await manager.append(source.id, msg("alt", "alternative"), "u2");
        await manager.addCompaction(source.id, "summary of one and two", "u1", "a1");
        const fork = await manager.fork(source.id, "a2", "Forked Chat");
        assert.equal(fork.parent_session_id, source.id);
        assert.equal(fork.name, "Forked Chat");
        const history = await manager.getHistory(fork.id);
        assert.deepEqual(history.map(text), ["summary of one and two", "three", "four"]);
        assert.ok(
          history.every((m) => !["u1", "a1", "u2", "a2"].includes(m.id) && !m.id.startsWith("compaction_")),
        );
        assert.equal(new Set(ids(history)).size, 3);
        assert.deepEqual(await manager.getCompactions(fork.id), []);
        assert.equal(await manager.getMessageCount(fork.id), 3);
        assert.deepEqual(ids(await manager.getBranches(fork.id, history[0]!.id)), [history[1]!.id]);
        // The two sessions are independent from here on.
        await manager.append(fork.id, msg("f1", "only in the fork"));
        assert.equal((await manager.getHistory(source.id)).length, 3);
        assert.deepEqual(ids(await manager.list()).slice(0, 2), [fork.id, source.id]);
        const count = (await manager.list()).length;
        await rejectsWithCode(manager.fork(source.id, "missing", "x"), "NOT_FOUND");
        await rejectsWithCode(manager.fork(source.id, "u1", 7 as never), "INVALID_ARGUMENT");
        assert.equal((await manager.list()).length, count, "a failed fork registers nothing");
      }));

    test("fork and compactAndSplit copy the session's writable blocks", (t) =>
      withRegistryStore(t, target, async (store) => {
        if (!hasContextStorage(store)) return t.skip("this store cannot hold context blocks");
        const manager = SessionManager.create(store)
          .withContext("memory", { description: "facts" })
          .withContext("soul", { provider: { get: async () => "fixed" } });
        const source = await manager.create("source");
        await manager.append(source.id, msg("u1", "hello"));
        await manager.getSession(source.id).replaceContextBlock("memory", "likes tea");
        const fork = await manager.fork(source.id, "u1", "fork");
        const forked = manager.getSession(fork.id);
        await forked.ready();
        assert.equal(forked.getContextBlock("memory")?.content, "likes tea");
        await forked.replaceContextBlock("memory", "likes coffee");
        assert.equal(await store.blocks.getBlock(`memory_${source.id}`), "likes tea", "a copy, not a link");
        const next = await manager.compactAndSplit(source.id, "summary");
        assert.equal(await store.blocks.getBlock(`memory_${next.id}`), "likes tea");
      }));

    test("compactAndSplit ends the old session and starts a continuation with the summary", (t) =>
      withManager(t, target, async (manager) => {
        const old = await manager.create("Long chat", { model: "claude", source: "api" });
        await manager.appendAll(old.id, [msg("u1"), msg("a1")]);
        await manager.addUsage(old.id, 500, 50, 0.1);
        const next = await manager.compactAndSplit(old.id, "We agreed on Friday.", "Continued Chat");
        assert.equal(next.name, "Continued Chat");
        assert.equal(next.parent_session_id, old.id);
        assert.deepEqual(
          [next.model, next.source, next.input_tokens, next.end_reason],
          ["claude", "api", 0, null],
        );
        const history = await manager.getHistory(next.id);
        assert.equal(history.length, 1);
        assert.equal(history[0]?.role, "assistant");
        assert.equal(text(history[0]!), "[Context from previous session]\n\nWe agreed on Friday.");
        assert.equal((await manager.get(old.id))?.end_reason, "compaction");
        assert.equal((await manager.getHistory(old.id)).length, 2, "the old session keeps its messages");
        assert.deepEqual(ids(await manager.list()), [next.id, old.id]);
        const unnamed = await manager.compactAndSplit(next.id, "again");
        assert.equal(unnamed.name, "Continued Chat");
        await rejectsWithCode(manager.compactAndSplit(next.id, 5 as never), "INVALID_ARGUMENT");
      }));

    test("addCompaction and getCompactions", (t) =>
      withManager(t, target, async (manager) => {
        const { id } = await manager.create("chat");
        await manager.appendAll(id, [msg("u1"), msg("a1"), msg("u2")]);
        const c = await manager.addCompaction(id, "summary", "u1", "a1");
        assert.deepEqual(
          (await manager.getCompactions(id)).map((x) => [x.id, x.summary]),
          [[c.id, "summary"]],
        );
        assert.deepEqual(ids(await manager.getHistory(id)), [`compaction_${c.id}`, "u2"]);
      }));
  });
}
