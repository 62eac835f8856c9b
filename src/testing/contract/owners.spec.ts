import assert from "node:assert/strict";
import type { SessionInfo } from "../../contract/registry.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import type { SessionManager } from "../../manager/manager.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, toAsync } from "./harness.js";
import { withManager } from "./manager-harness.js";

/** Two owners and an unowned session, each holding the word "secret" in its own message. */
async function seed(manager: SessionManager) {
  const alice = await manager.create("alice's", { owner: "alice" });
  const bob = await manager.create("bob's", { owner: "bob" });
  const nobody = await manager.create("nobody's");
  await manager.append(alice.id, msg("a1", "alice secret plan"));
  await manager.append(bob.id, msg("b1", "bob secret plan"));
  await manager.append(nobody.id, msg("n1", "unowned secret plan"));
  await manager.addUsage(alice.id, 10, 5, 0.5);
  await manager.addUsage(bob.id, 1000, 500, 50);
  return { alice, bob, nobody };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Owners: set once, kept by fork and transfer, and `forOwner` sees only the owner's sessions on every path. */
export function ownersSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("Owners", () => {
    test("an owner is set at create, absent without one, and kept by fork and compactAndSplit", (t) =>
      withManager(t, target, async (manager) => {
        const { alice, nobody } = await seed(manager);
        assert.equal(alice.owner, "alice");
        assert.equal((await manager.get(alice.id))?.owner, "alice");
        assert.equal("owner" in nobody, false, "no owner: the field is absent");
        assert.equal("owner" in ((await manager.get(nobody.id)) ?? {}), false);
        const fork = await manager.fork(alice.id, "a1", "fork");
        assert.equal(fork.owner, "alice");
        const next = await manager.compactAndSplit(alice.id, "summary");
        assert.equal(next.owner, "alice");
        assert.equal((await manager.fork(nobody.id, "n1", "f")).owner, undefined);
        // Set once: registering the id again, with another owner or the same, is CONFLICT.
        await rejectsWithCode(manager.create("again", { id: alice.id, owner: "bob" }), "CONFLICT");
        assert.equal((await manager.get(alice.id))?.owner, "alice");
      }));

    test("bad owner ids are INVALID_ARGUMENT naming the field", (t) =>
      withManager(t, target, async (manager) => {
        for (const bad of [
          "",
          "a\u0000b",
          "line\nbreak",
          "esc\u001b[0m",
          "\ud800",
          "x".repeat(257),
          42,
          {},
        ]) {
          const owner = { path: "owner", rule: "format" } as const;
          await rejectsWithCode(manager.create("s", { owner: bad as string }), "INVALID_ARGUMENT", owner);
          await rejectsWithCode(
            Promise.resolve().then(() => manager.forOwner(bad as string)),
            "INVALID_ARGUMENT",
            owner,
          );
          await rejectsWithCode(manager.search("x", { owner: bad as string }), "INVALID_ARGUMENT", owner);
        }
        // 256 bytes of UTF-8 is the limit (é is two bytes).
        assert.equal((await manager.create("s", { owner: "é".repeat(128) })).owner, "é".repeat(128));
        await rejectsWithCode(manager.create("s", { owner: "é".repeat(129) }), "INVALID_ARGUMENT", {
          path: "owner",
        });
        assert.equal((await manager.list()).length, 1, "nothing registered by a refused create");
      }));

    test("forOwner lists, gets and opens only the owner's sessions; others are NOT_FOUND", (t) =>
      withManager(t, target, async (manager) => {
        const { alice, bob, nobody } = await seed(manager);
        const view = manager.forOwner("alice");
        const made = await view.create("second");
        assert.equal(made.owner, "alice");
        await rejectsWithCode(view.create("x", { owner: "bob" }), "INVALID_ARGUMENT");
        assert.deepEqual((await view.list()).map((s) => s.id).sort(), [alice.id, made.id].sort());
        assert.deepEqual(ids(await view.list({ limit: 1 })), [made.id], "newest activity first");
        assert.deepEqual(
          (await manager.list({ owner: "bob" })).map((s) => s.id),
          [bob.id],
        );
        assert.equal((await manager.list()).length, 4, "the manager itself stays unscoped");
        assert.equal((await view.get(alice.id))?.id, alice.id);
        for (const other of [bob.id, nobody.id, "no-such-session"]) {
          assert.equal(await view.get(other), null);
          await rejectsWithCode(view.getSession(other), "NOT_FOUND");
          await rejectsWithCode(view.rename(other, "taken"), "NOT_FOUND");
          await rejectsWithCode(view.fork(other, "b1", "stolen"), "NOT_FOUND");
          await rejectsWithCode(view.compactAndSplit(other, "s"), "NOT_FOUND");
          await rejectsWithCode(view.search("secret", { sessionId: other }), "NOT_FOUND");
          assert.equal(await view.delete(other), false);
        }
        assert.equal((await manager.get(bob.id))?.name, "bob's", "another owner's session is untouched");
        const session = await view.getSession(alice.id);
        assert.deepEqual(ids(await session.getHistory()), ["a1"]);
        const fork = await view.fork(alice.id, "a1", "fork");
        assert.equal(fork.owner, "alice");
        assert.deepEqual(ids(await view.list({ limit: 1 })), [fork.id]);
        assert.equal(await view.delete(made.id), true);
        assert.equal(await manager.get(made.id), null);
      }));

    test("search and session_search find only the owner's messages", (t) =>
      withManager(t, target, async (manager) => {
        const { alice, bob } = await seed(manager);
        const view = manager.forOwner("alice");
        for (const match of ["any", "all"] as const) {
          assert.deepEqual(ids(await view.search("secret plan", { match })), ["a1"], match);
          assert.deepEqual(ids(await manager.search("secret plan", { match, owner: "bob" })), ["b1"], match);
          assert.deepEqual(ids(await view.search("secret", { match, branch: "active", context: 1 })), ["a1"]);
          assert.deepEqual(ids(await view.search("secret", { match, sessionIds: [alice.id, bob.id] })), [
            "a1",
          ]);
          assert.deepEqual(ids(await view.search("secret", { match, sessionId: alice.id })), ["a1"]);
        }
        assert.deepEqual(ids(await manager.forOwner("carol").search("secret")), [], "an owner with nothing");
        assert.equal((await manager.search("secret")).length, 3, "unscoped search spans every session");
        const output = String(await view.tools().session_search!.execute({ query: "secret plan" }));
        assert.match(output, /alice secret plan/);
        assert.doesNotMatch(output, /bob|unowned/);
        assert.equal(
          await manager.forOwner("carol").tools().session_search!.execute({ query: "secret" }),
          "No results found.",
        );
      }));

    test("a session's searchable history covers only its owner's sessions", (t) =>
      withManager(t, target, async (manager) => {
        manager.withSearchableHistory("history");
        const { alice, nobody } = await seed(manager);
        const session = await manager.forOwner("alice").getSession(alice.id);
        const tools = await session.tools();
        const found = String(await tools.search_context?.execute({ label: "history", query: "secret plan" }));
        assert.match(found, /alice secret plan/);
        assert.doesNotMatch(found, /bob|unowned/);
        const unowned = await manager.getSession(nobody.id).tools();
        const all = String(await unowned.search_context?.execute({ label: "history", query: "secret plan" }));
        assert.match(all, /bob secret plan/, "an unowned session's history spans every session, as before");
      }));

    test("usage totals and export cover only the owner's sessions", (t) =>
      withManager(t, target, async (manager, store) => {
        const { alice } = await seed(manager);
        const view = manager.forOwner("alice");
        const fork = await view.fork(alice.id, "a1", "fork");
        await manager.addUsage(fork.id, 1, 2, 0.25, { cacheReadTokens: 3 });
        assert.deepEqual(await view.usage(), {
          sessions: 2,
          input_tokens: 11,
          output_tokens: 7,
          cache_read_tokens: 3,
          cache_write_tokens: 0,
          estimated_cost: 0.75,
        });
        assert.equal((await manager.forOwner("carol").usage()).sessions, 0);
        if (!hasTransfer(store)) return;
        const items = await collect(view.export());
        const headers = items.filter((item) => item.kind === "session");
        assert.deepEqual(headers.map((h) => h.session.id).sort(), [alice.id, fork.id].sort());
        assert.ok(headers.every((h) => h.session.info?.owner === "alice"));
        const text = JSON.stringify(items.filter((item) => item.kind === "message"));
        assert.doesNotMatch(text, /bob|unowned/);
      }));

    test("export and import keep the owner; an imported bad owner is refused", (t) =>
      withManager(t, target, async (manager, store) => {
        if (!hasTransfer(store)) return t.skip("this store has no transfer");
        const { alice } = await seed(manager);
        const items = await collect(store.transfer.exportSession(alice.id));
        await manager.delete(alice.id);
        await store.transfer.importSession(toAsync(items));
        assert.equal((await manager.get(alice.id))?.owner, "alice");
        assert.deepEqual(ids(await manager.forOwner("alice").search("secret")), ["a1"]);
        const header = items[0] as Extract<TransferItem, { kind: "session" }>;
        const forged: TransferItem = {
          kind: "session",
          session: {
            ...header.session,
            id: "forged",
            info: { ...(header.session.info as SessionInfo), id: "forged", owner: "bad\nowner" },
          },
        };
        await rejectsWithCode(store.transfer.importSession(toAsync([forged])), "INVALID_ARGUMENT", {
          path: "info.owner",
        });
        assert.equal(await manager.get("forged"), null);
      }));

    test("export and import keep a pin; an imported pinned flag that is not a boolean is refused", (t) =>
      withManager(t, target, async (manager, store) => {
        if (!hasTransfer(store)) return t.skip("this store has no transfer");
        if (typeof store.registry.pin !== "function") return t.skip("this store's registry cannot pin");
        const { alice, bob } = await seed(manager);
        await manager.pin(alice.id);
        const pinned = await collect(store.transfer.exportSession(alice.id));
        const unpinned = await collect(store.transfer.exportSession(bob.id));
        const header = pinned[0] as Extract<TransferItem, { kind: "session" }>;
        assert.equal(header.session.info?.pinned, true, "the export carries the pin");
        await manager.delete(alice.id);
        await manager.delete(bob.id);
        await store.transfer.importSession(toAsync(pinned));
        await store.transfer.importSession(toAsync(unpinned));
        assert.equal((await manager.get(alice.id))?.pinned, true);
        assert.equal("pinned" in ((await manager.get(bob.id)) ?? {}), false);
        // A sweep that would erase everything keeps the imported pin.
        const report = await manager.sweep({ maxAgeMs: 0 }, { now: new Date(Date.now() + 60_000) });
        assert.equal(report.erased.sessionIds.includes(alice.id), false);
        assert.ok(report.erased.sessionIds.includes(bob.id));
        const info = header.session.info as SessionInfo;
        const unpin: TransferItem = {
          kind: "session",
          session: {
            ...header.session,
            id: "unpin",
            leafId: null,
            info: { ...info, id: "unpin", pinned: false as never },
          },
        };
        await store.transfer.importSession(toAsync([unpin]));
        assert.equal("pinned" in ((await manager.get("unpin")) ?? {}), false, "false is stored as no pin");
        const forged: TransferItem = {
          kind: "session",
          session: {
            ...header.session,
            id: "forged",
            info: { ...info, id: "forged", pinned: "yes" as never },
          },
        };
        await rejectsWithCode(store.transfer.importSession(toAsync([forged])), "INVALID_ARGUMENT", {
          path: "info.pinned",
        });
        assert.equal(await manager.get("forged"), null);
      }));
  });
}
