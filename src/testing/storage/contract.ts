import assert from "node:assert/strict";
import type { SessionState, SessionStorage } from "../../agent/types.js";
import { checkTarget, disposing, rejectsWithCode as rejectsCode, suiteOf, type TestApi } from "../runner.js";
import { runStateInputContract } from "./contract-input.js";
import { entry, sampleMessages, sampleState } from "./fixtures.js";

/** A storage under test: how to make a fresh empty one, dispose of it, and (if persistent) reopen it. */
export interface StorageTarget {
  name: string;
  create(): Promise<SessionStorage>;
  destroy?(storage: SessionStorage): Promise<void>;
  /** A second instance over the same data (another process would see this). */
  reopen?(storage: SessionStorage): Promise<SessionStorage>;
  /** Suite-level skip reason (server unavailable). */
  skip?: string | false;
}

function withStorage(target: StorageTarget, body: (storage: SessionStorage) => Promise<void>): Promise<void> {
  return target.create().then((storage) => disposing(target, storage, body));
}

/** What a state looks like after a storage round trip (totals derived, JSON-clean). */
function expected(state: SessionState): SessionState {
  return JSON.parse(JSON.stringify(state)) as SessionState;
}

/**
 * The one behaviour every agent `SessionStorage` must have, declared with the injected runner's `describe`/`it`:
 * `runStorageContract({ describe, it }, { name, create })`. A storage without `appendMessages` or `reopen`
 * skips those tests with the reason.
 */
export function runStorageContract(api: TestApi, target: StorageTarget): void {
  const { describe, test: it } = suiteOf(api);
  checkTarget(target, "runStorageContract");
  const title = `SessionStorage contract: ${target.name}`;
  const skip = target.skip;
  if (typeof skip === "string" && skip !== "") {
    describe(title, () => it("every test", (t) => t.skip(skip)));
    return;
  }
  describe(title, () => {
    it("loads undefined for an unknown id and lists nothing when empty", () =>
      withStorage(target, async (storage) => {
        assert.equal(await storage.load("nope"), undefined);
        assert.deepEqual(await storage.list(), []);
      }));

    it("round-trips a whole state, with totals derived from the ledger", () =>
      withStorage(target, async (storage) => {
        const state = sampleState({ parentId: "parent-1" });
        await storage.save(state);
        const loaded = await storage.load(state.id);
        assert.deepEqual(loaded, expected(state));
        assert.equal(loaded?.usage.inputTokens, 150);
        assert.equal(loaded?.usage.costUsd, 0.25);
        assert.equal(loaded?.usage.steps, 2);
        const plain = sampleState();
        await storage.save(plain);
        const again = await storage.load(plain.id);
        assert.equal("parentId" in (again ?? {}), false, "no parentId key when there is no parent");
      }));

    it("save replaces a stored state and list/delete track ids", () =>
      withStorage(target, async (storage) => {
        const a = sampleState();
        const b = sampleState();
        await storage.save(a);
        await storage.save(b);
        assert.deepEqual([...(await storage.list())].sort(), [a.id, b.id].sort());
        const shorter = {
          ...a,
          messages: a.messages.slice(0, 1),
          usage: { ...a.usage, entries: [] },
          metadata: {},
        };
        await storage.save(shorter);
        const loaded = await storage.load(a.id);
        assert.equal(loaded?.messages.length, 1);
        assert.equal(loaded?.usage.entries.length, 0);
        assert.equal(loaded?.usage.totalTokens, 0);
        await storage.delete(a.id);
        await storage.delete("never-existed");
        assert.equal(await storage.load(a.id), undefined);
        assert.deepEqual(await storage.list(), [b.id]);
        assert.equal((await storage.load(b.id))?.messages.length, 4);
      }));

    it("hands out copies: changing a loaded or saved state changes nothing stored", () =>
      withStorage(target, async (storage) => {
        const state = sampleState();
        await storage.save(state);
        state.messages.push(sampleMessages("x")[0]!);
        const loaded = (await storage.load(state.id))!;
        loaded.messages.length = 0;
        loaded.metadata.title = "changed";
        const again = (await storage.load(state.id))!;
        assert.equal(again.messages.length, 4);
        assert.equal(again.metadata.title, "Sample");
      }));

    it("appendMessages adds messages and ledger entries in order, replacing metadata only when given", async (t) => {
      await withStorage(target, async (storage) => {
        if (!storage.appendMessages) return t.skip("no appendMessages");
        const state = sampleState({ messages: [], usage: { ...sampleState().usage, entries: [] } });
        await storage.save(state);
        const [m1, m2, m3] = sampleMessages("a");
        await storage.appendMessages(state.id, [m1!], {
          updatedAt: 5,
          usage: [entry(1)],
          metadata: { step: 1 },
        });
        await storage.appendMessages(state.id, [m2!, m3!], { updatedAt: 6, usage: [entry(2, 7, 3)] });
        await storage.appendMessages(state.id, [], { updatedAt: 7, metadata: { step: 3 } });
        const loaded = (await storage.load(state.id))!;
        assert.deepEqual(loaded.messages, expected({ ...state, messages: [m1!, m2!, m3!] }).messages);
        assert.deepEqual(loaded.metadata, { step: 3 });
        assert.equal(loaded.updatedAt, 7);
        assert.equal(loaded.usage.entries.length, 2);
        assert.equal(loaded.usage.inputTokens, 107);
        assert.equal(loaded.usage.outputTokens, 23);
        assert.equal(loaded.createdAt, state.createdAt);
      });
    });

    it("appendMessages to an unknown session fails with NOT_FOUND", async (t) => {
      await withStorage(target, async (storage) => {
        if (!storage.appendMessages) return t.skip("no appendMessages");
        await rejectsCode(storage.appendMessages("ghost", sampleMessages(), { updatedAt: 1 }), "NOT_FOUND");
        assert.deepEqual(await storage.list(), []);
      });
    });

    it("appends after a save start from the saved state; sessions do not see each other's appends", async (t) => {
      await withStorage(target, async (storage) => {
        if (!storage.appendMessages) return t.skip("no appendMessages");
        const a = sampleState();
        const b = sampleState();
        await storage.save(a);
        await storage.save(b);
        await storage.appendMessages(a.id, sampleMessages("n"), { updatedAt: 9, usage: [entry(3)] });
        await storage.save({ ...a, messages: a.messages.slice(0, 2) });
        await storage.appendMessages(a.id, sampleMessages("p").slice(0, 1), { updatedAt: 10 });
        const loaded = (await storage.load(a.id))!;
        assert.deepEqual(
          loaded.messages.map((m) => m.id),
          ["m1", "m2", "p1"],
        );
        assert.equal((await storage.load(b.id))?.messages.length, 4);
      });
    });

    it("keeps every one of many concurrent appends, each message once", async (t) => {
      await withStorage(target, async (storage) => {
        if (!storage.appendMessages) return t.skip("no appendMessages");
        const state = sampleState({ messages: [] });
        await storage.save(state);
        const batches = Array.from({ length: 40 }, (_, i) => sampleMessages(`c${i}-`).slice(0, 2));
        await Promise.all(
          batches.map((batch, i) =>
            storage.appendMessages!(state.id, batch, { updatedAt: 100 + i, usage: [entry(i)] }),
          ),
        );
        const loaded = (await storage.load(state.id))!;
        assert.equal(loaded.messages.length, 80);
        assert.equal(new Set(loaded.messages.map((m) => m.id)).size, 80);
        assert.equal(loaded.usage.entries.length, 42);
        for (let i = 0; i < 40; i++) {
          // A batch's messages stay adjacent and in order.
          const at = loaded.messages.findIndex((m) => m.id === `c${i}-1`);
          assert.equal(loaded.messages[at + 1]?.id, `c${i}-2`);
        }
      });
    });

    it("is durable: a second instance over the same data sees everything", async (t) => {
      if (!target.reopen) return t.skip("in-process storage");
      await withStorage(target, async (storage) => {
        const state = sampleState();
        await storage.save(state);
        await storage.appendMessages?.(state.id, sampleMessages("d"), { updatedAt: 42, usage: [entry(9)] });
        const other = await target.reopen!(storage);
        const loaded = (await other.load(state.id))!;
        assert.equal(loaded.messages.length, storage.appendMessages ? 8 : 4);
        assert.deepEqual(await other.list(), [state.id]);
        if (other !== storage) await other.close?.();
      });
    });

    it("refuses ids that are not strings or are empty with INVALID_ARGUMENT", () =>
      withStorage(target, async (storage) => {
        await rejectsCode(storage.load(""), "INVALID_ARGUMENT");
        await rejectsCode(
          storage.save({ ...sampleState(), id: 42 as unknown as string }),
          "INVALID_ARGUMENT",
        );
        await rejectsCode(storage.delete("a\u0000b"), "INVALID_ARGUMENT");
      }));

    runStateInputContract(it, (body) => withStorage(target, body));
  });
}
