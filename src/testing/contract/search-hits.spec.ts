import assert from "node:assert/strict";
import type { SearchHit } from "../../contract/search.js";
import type { SessionStore } from "../../contract/store.js";
import { Session } from "../../session/session.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, withStore } from "./harness.js";
import { isIso, withManager } from "./manager-harness.js";

// "one" matches a single query word, three times in a short message: the higher score. "both" matches both words
// once in a long message: the lower score, and the first rank (matching more of the query's words comes first).
const ONE = "Kayaking kayaking kayaking.";
const BOTH =
  "We talked for a long while about the weather, the garden, the neighbours and then the trip: kayaking in " +
  "Norway, maybe next summer with the whole family and friends.";

async function seedTiers(store: SessionStore): Promise<void> {
  await store.session("s1").appendMessage(msg("one", ONE));
  await store.session("s2").appendMessage(msg("both", BOTH));
  // Common enough that "norway" weighs less than "kayaking".
  for (let i = 0; i < 6; i++) await store.session(`n${i}`).appendMessage(msg(`n${i}`, `Norway note ${i}`));
}

/** Checks what every SearchHit promises: rank 1..n in array order, an ISO time within `window`, a finite score. */
function assertExact(hits: readonly SearchHit[], window: { from: number; to: number }, label: string): void {
  assert.ok(hits.length > 0, `${label}: some hits`);
  hits.forEach((hit, i) => {
    assert.equal(hit.rank, i + 1, `${label}: ${hit.id} is at its rank`);
    assert.ok(isIso(hit.createdAt), `${label}: ${hit.id} createdAt ${hit.createdAt}`);
    const at = Date.parse(hit.createdAt);
    assert.ok(at >= window.from && at <= window.to, `${label}: ${hit.id} stored within the seeding`);
    assert.equal(typeof hit.sessionId, "string", `${label}: ${hit.id} sessionId`);
    assert.ok(Number.isFinite(hit.score), `${label}: ${hit.id} score ${hit.score}`);
    for (const turn of [...(hit.context?.before ?? []), ...(hit.context?.after ?? [])]) {
      assert.ok(isIso(turn.createdAt), `${label}: context turn ${turn.id} createdAt ${turn.createdAt}`);
    }
  });
}

/** The search hit every backend hands out: exact fields, and `rank` as the order (not `score`). */
export function searchHitsSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search hits", () => {
    test("every hit is exact: rank 1..n in order, its ISO stored time, its session, a finite score", () =>
      withStore(target, async (store) => {
        // Whole milliseconds: a store may keep its times to the millisecond.
        const from = Date.now() - 1;
        const s = store.session("chat");
        await s.appendMessage(msg("q", "When is the billing deployment?"));
        await s.appendMessage(msg("a1", "The deployment is on Monday", "assistant"));
        await s.appendMessage(msg("a2", "The billing deployment moved to Friday", "assistant"), "q");
        await store.session("other").appendMessage(msg("o1", "Friday deployment checklist"));
        const window = { from, to: Date.now() + 1 };
        for (const match of ["any", "all"] as const) {
          const hits = await store.searchMessages("billing deployment", { match, context: 1 });
          assertExact(hits, window, `store ${match}`);
          const bySession = new Map(hits.map((h) => [h.id, h.sessionId]));
          assert.equal(bySession.get("a2"), "chat");
          if (match === "any") assert.equal(bySession.get("o1"), "other");
          const session = await Session.create(store)
            .forSession("chat")
            .search("billing deployment", { match });
          assertExact(session, window, `Session ${match}`);
          assert.ok(
            session.every((h) => h.sessionId === "chat"),
            "Session.search: its own session",
          );
        }
        const active = await store.searchMessages("deployment", { branch: "active", role: "assistant" });
        assertExact(active, window, "store filtered");
        assert.deepEqual(ids(active), ["a2"]);
      }));

    test("hits come in rank order; a hit matching more of the query's words outranks a higher score", () =>
      withStore(target, async (store) => {
        await seedTiers(store);
        const hits = await store.searchMessages("kayaking Norway");
        assert.deepEqual(ids(hits).slice(0, 2), ["both", "one"]);
        assert.deepEqual(
          hits.map((h) => h.rank),
          hits.map((_, i) => i + 1),
        );
        const [both, one] = hits;
        // Why rank is the order to keep: sorting these hits by score would put "one" first.
        assert.ok(one!.score > both!.score, `score ${one!.score} (one) > ${both!.score} (both)`);
        const session = await Session.create(store).forSession("s2").search("kayaking Norway");
        assert.deepEqual(
          session.map((h) => [h.id, h.rank]),
          [["both", 1]],
        );
        // Regrouped by session, the hits keep the order the search gave them through their rank.
        const regrouped = [...hits].sort((a, b) => a.sessionId.localeCompare(b.sessionId));
        regrouped.sort((a, b) => a.rank - b.rank);
        assert.deepEqual(ids(regrouped), ids(hits));
      }));

    test("SessionManager.search hands out the same exact hits in rank order", (t) =>
      withManager(t, target, async (manager) => {
        const from = Date.now() - 1;
        for (const id of ["s1", "s2", "n0", "n1", "n2", "n3", "n4", "n5"]) await manager.create(id, { id });
        await manager.append("s1", msg("one", ONE));
        await manager.append("s2", msg("both", BOTH));
        for (let i = 0; i < 6; i++) await manager.append(`n${i}`, msg(`n${i}`, `Norway note ${i}`));
        const hits = await manager.search("kayaking Norway", { context: 1 });
        assertExact(hits, { from, to: Date.now() + 1 }, "manager");
        assert.deepEqual(ids(hits).slice(0, 2), ["both", "one"]);
        assert.deepEqual(
          hits.slice(0, 2).map((h) => h.sessionId),
          ["s2", "s1"],
        );
        const owned = await manager.forOwner("nobody").search("kayaking");
        assert.deepEqual(owned, []);
      }));
  });
}
