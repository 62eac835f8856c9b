import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer, type TransferRow } from "../../contract/transfer.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, toAsync, withStore } from "./harness.js";

function entriesOf(store: SessionStore) {
  assert.ok(hasContextStorage(store), `${store.backend} store has entries`);
  return store.entries;
}

const sorted = (hits: readonly { id: string }[]) => ids(hits).sort();

/** Cases where backends disagreed in the differential search fuzz: each must match the same set everywhere. */
export function searchAgreementSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search agrees across backends", () => {
    test("accents and marks of non-Latin scripts fold as Latin ones do (Greek, Cyrillic, Arabic)", () =>
      withStore(target, async (store) => {
        const s = store.session("fold");
        await s.appendMessage(msg("g1", "Καλημέρα από την Αθήνα"));
        await s.appendMessage(msg("g2", "αθηνα χωρίς τόνους"));
        await s.appendMessage(msg("c1", "ЁЖИК в тумане"));
        await s.appendMessage(msg("c2", "ежик без точек"));
        await s.appendMessage(msg("a1", "كِتَاب جديد"));
        await s.appendMessage(msg("a2", "كتاب قديم"));
        for (const query of ["Αθήνα", "αθηνα", "ΑΘΗΝΑ"]) {
          assert.deepEqual(sorted(await store.searchMessages(query)), ["g1", "g2"], query);
        }
        for (const query of ["ёжик", "ежик", "ЕЖИК"]) {
          assert.deepEqual(sorted(await store.searchMessages(query)), ["c1", "c2"], query);
        }
        for (const query of ["كتاب", "كِتَاب"]) {
          assert.deepEqual(sorted(await store.searchMessages(query)), ["a1", "a2"], query);
        }
        assert.deepEqual(ids(await store.searchMessages('"ежик в тумане"')), ["c1"]);
        assert.deepEqual(ids(await store.searchMessages('"την αθηνα"', { sessionId: "fold" })), ["g1"]);
        assert.deepEqual(ids(await s.searchMessages!("Αθήνα τόνους", undefined, { match: "all" })), ["g2"]);
        // A capital sigma ends its word however the text goes on.
        await s.appendMessage(msg("g3", "ΛΟΓΟΣ'ΚΑΙ ΕΡΓΟ"));
        assert.deepEqual(ids(await store.searchMessages("λογος")), ["g3"]);
      }));

    test("a token of combining marks alone is no word: a phrase reads across it", () =>
      withStore(target, async (store) => {
        const s = store.session("marks");
        await s.appendMessage(msg("m1", "alpha \u0301\u0302 omega"));
        await s.appendMessage(msg("m2", "alpha beta omega"));
        assert.deepEqual(ids(await store.searchMessages('"alpha omega"')), ["m1"]);
        assert.deepEqual(sorted(await store.searchMessages("alpha omega")), ["m1", "m2"]);
      }));

    test("a message's length weighs by its token estimate everywhere: one 100 KB word makes a message long", () =>
      withStore(target, async (store) => {
        const s = store.session("long");
        // Both match "alpha" once. The short note is older, so only its length can put it first; counted in index
        // tokens the 100 KB word was one token (memory ranked its message first), in a token estimate 25,000.
        await s.appendMessage(msg("short", "alpha is in this short note about the weather today"));
        await s.appendMessage(msg("gap", "ok", "assistant"));
        await s.appendMessage(msg("long", `alpha ${"x".repeat(100_000)}`));
        const hits = await store.searchMessages("alpha", { sessionId: "long" });
        assert.deepEqual(ids(hits), ["short", "long"]);
        assert.ok(hits[0]!.score! > hits[1]!.score!, `${hits[0]!.score} > ${hits[1]!.score}`);
      }));

    test("a search-block entry's length weighs by its characters everywhere: one 100 KB word makes it long", () =>
      withStore(target, async (store) => {
        const entries = entriesOf(store);
        // Both match "alpha" once and the short one is older, so only its length can put it first (memory counted
        // index tokens: the 100 KB word was one, and the long entry came first there alone).
        await entries.setEntry("kb", "short", "alpha is in this short note about the weather today");
        await entries.setEntry("kb", "long", `alpha ${"x".repeat(100_000)}`);
        assert.deepEqual(
          (await entries.searchEntries("kb", "alpha")).map((h) => h.key),
          ["short", "long"],
        );
      }));

    test("a search-block entry is found by its key, written directly or imported", () =>
      withStore(target, async (store) => {
        const entries = entriesOf(store);
        await entries.setEntry("kb", "Pirate style", "Speak like a sailor");
        assert.deepEqual(await entries.searchEntries("kb", "pirate"), [
          { key: "Pirate style", content: "Speak like a sailor" },
        ]);
        assert.deepEqual((await entries.searchEntries("kb", '"style speak"')).length, 1);
        if (!hasTransfer(store)) return;
        const row: TransferRow = { kind: "entry", label: "kb", key: "Deploy runbook", content: "Steps" };
        await store.transfer.importRows(toAsync([row]));
        assert.deepEqual(
          (await entries.searchEntries("kb", "runbook")).map((h) => h.key),
          ["Deploy runbook"],
        );
      }));

    test("a label's entries are found however many newer matches other labels hold", () =>
      withStore(target, async (store) => {
        const entries = entriesOf(store);
        await entries.setEntry("small", "old", "deploy notes");
        const rows: TransferRow[] = Array.from({ length: SEARCH_CANDIDATES + 1 }, (_, i) => ({
          kind: "entry",
          label: "big",
          key: `k${i}`,
          content: `deploy ${i}`,
        }));
        if (hasTransfer(store)) await store.transfer.importRows(toAsync(rows));
        else for (const row of rows) await entries.setEntry("big", row.key, row.content);
        assert.deepEqual(
          (await entries.searchEntries("small", "deploy")).map((h) => h.key),
          ["old"],
        );
        assert.equal((await entries.searchEntries("big", "deploy", 1000)).length, 1000);
      }));

    test("entries: 10 hits unless told; a query over the limits is refused even with limit 0", () =>
      withStore(target, async (store) => {
        const entries = entriesOf(store);
        for (let i = 0; i < 12; i++) await entries.setEntry("kb", `k${i}`, `kiwi ${i}`);
        assert.equal((await entries.searchEntries("kb", "kiwi")).length, 10);
        assert.equal((await entries.searchEntries("kb", "kiwi", 12)).length, 12);
        const tooMany = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
        await rejectsWithCode(entries.searchEntries("kb", tooMany, 0), "INVALID_ARGUMENT");
        await rejectsWithCode(entries.searchEntries("kb", "x".repeat(5000)), "INVALID_ARGUMENT");
      }));
  });
}
