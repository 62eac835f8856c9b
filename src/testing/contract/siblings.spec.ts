import assert from "node:assert/strict";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionProvider, Siblings } from "../../contract/provider.js";
import { Session } from "../../session/session.js";
import { MAX_SIBLINGS } from "../../store/siblings.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

// Every provider of this package has getSiblings (it is optional only for providers written elsewhere).
function siblings(s: SessionProvider, id: string): Promise<Siblings | null> {
  assert.equal(typeof s.getSiblings, "function", "the store's provider has getSiblings");
  return s.getSiblings!(id);
}

const shape = (found: Siblings<SessionMessage> | null) =>
  found && { siblings: ids(found.siblings), index: found.index };

/** getSiblings: a message among its parent's children, or among its session's roots, for a branch switcher. */
export function siblingsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("siblings", () => {
    test("a regenerated answer among its parent's children, oldest first, with its index", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("u1", "question"));
        await s.appendMessage(msg("a1", "first", "assistant"));
        await s.appendMessage(msg("a2", "second", "assistant"), "u1");
        await s.appendMessage(msg("a3", "third", "assistant"), "u1");
        await s.appendMessage(msg("u2", "follow-up"), "a2");
        assert.deepEqual(shape(await siblings(s, "a1")), { siblings: ["a1", "a2", "a3"], index: 0 });
        assert.deepEqual(shape(await siblings(s, "a3")), { siblings: ["a1", "a2", "a3"], index: 2 });
        assert.deepEqual(shape(await siblings(s, "u2")), { siblings: ["u2"], index: 0 });
      }));

    test("roots are siblings of each other (an edit of the first message makes a new root)", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("r1", "hello"));
        await s.appendMessage(msg("a1", "hi", "assistant"));
        await s.appendMessage(msg("r2", "hello, edited"), null);
        await s.appendMessage(msg("r3", "hello again"), null);
        // Another session's roots are not siblings.
        await store.session("b").appendMessage(msg("other", "elsewhere"));
        assert.deepEqual(shape(await siblings(s, "r2")), { siblings: ["r1", "r2", "r3"], index: 1 });
        assert.deepEqual(shape(await siblings(s, "a1")), { siblings: ["a1"], index: 0 });
        assert.deepEqual(shape(await siblings(store.session("b"), "other")), {
          siblings: ["other"],
          index: 0,
        });
      }));

    test("a deleted parent's children join its siblings, in storage order", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("r1"));
        await s.appendMessage(msg("c1"));
        await s.appendMessage(msg("r2"), null);
        await s.deleteMessages(["r1"]);
        assert.deepEqual(shape(await siblings(s, "r2")), { siblings: ["c1", "r2"], index: 1 });
      }));

    test("an unknown message, or one of another session, is null; an id no message can have is INVALID_ARGUMENT", () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("m1"));
        await store.session("b").appendMessage(msg("elsewhere"));
        assert.equal(await siblings(s, "ghost"), null);
        assert.equal(await siblings(s, "elsewhere"), null);
        assert.equal(await siblings(store.session("empty"), "m1"), null);
        await rejectsWithCode(siblings(s, ""), "INVALID_ARGUMENT");
      }));

    test(`at most MAX_SIBLINGS (${MAX_SIBLINGS}): one more is TOO_LARGE, never a shortened list`, () =>
      withStore(target, async (store) => {
        const s = store.session("a");
        await s.appendMessage(msg("u"));
        for (let i = 0; i < MAX_SIBLINGS; i++) await s.appendMessage(msg(`c${i}`), "u");
        const full = await siblings(s, `c${MAX_SIBLINGS - 1}`);
        assert.equal(full?.siblings.length, MAX_SIBLINGS);
        assert.equal(full?.index, MAX_SIBLINGS - 1);
        await s.appendMessage(msg("over"), "u");
        await rejectsWithCode(siblings(s, "c0"), "TOO_LARGE");
      }));

    test("Session.getSiblings answers the same", () =>
      withStore(target, async (store) => {
        const session = Session.create(store).forSession("a");
        await session.appendMessage(msg("r1"));
        await session.appendMessage(msg("r2"), null);
        assert.deepEqual(shape(await session.getSiblings("r2")), { siblings: ["r1", "r2"], index: 1 });
        assert.equal(await session.getSiblings("ghost"), null);
      }));
  });
}
