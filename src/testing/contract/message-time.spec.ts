import assert from "node:assert/strict";
import type { SearchHit } from "../../contract/search.js";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

// A conversation loaded with its own times (docs/STORAGE.md, "A message's time"): all in May 2023.
const MAY_7 = new Date("2023-05-07T10:00:00.000Z");
const MAY_8 = "2023-05-08T09:30:00+02:00";
const MAY_8_UTC = "2023-05-08T07:30:00.000Z";
// The type says Date; an ISO-8601 string is accepted as well (docs/STORAGE.md, `createdAt` on messages).
const asCarried = (iso: string) => iso as unknown as Date;
const MAY = { since: "2023-05-01T00:00:00.000Z", until: "2023-06-01T00:00:00.000Z" };

/** Each hit's reported time, by id. */
function timesOf(hits: readonly SearchHit[]): Record<string, string> {
  return Object.fromEntries(hits.map((hit) => [hit.id, hit.createdAt]));
}

/** Asserts `time` is an instant between `from` and now (a row stamped by the write). */
function assertWrittenSince(time: string | undefined, from: number, label: string): void {
  const at = Date.parse(time ?? "");
  assert.ok(at >= from && at <= Date.now() + 1, `${label}: ${time} is the write's time`);
}

/** Seeds session "m": two May 2023 turns (one a branch of the other's parent) and one without a time. */
async function seedMay(store: SessionStore): Promise<number> {
  const s = store.session("m");
  await s.appendMessage(msg("may8", "the kayak trip was lovely", "user", { createdAt: asCarried(MAY_8) }));
  // Appended after may8 but a day older, as a reply to it: the tree decides the order, never the times.
  await s.appendMessage(msg("may7", "kayak rental booked", "assistant", { createdAt: MAY_7 }));
  const from = Date.now() - 1;
  await s.appendMessage(msg("now", "kayak stored again today"));
  return from;
}

/** A message's time is the time it carries: hits, since/until and the tree, on every backend. */
export function messageTimeSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("a message's time", () => {
    test("a createdAt a message carries is its hit's time and what since/until filter on; none is now", () =>
      withStore(target, async (store) => {
        const from = await seedMay(store);
        for (const match of ["any", "all"] as const) {
          const all = timesOf(await store.searchMessages("kayak", { match }));
          assert.equal(all.may7, MAY_7.toISOString(), match);
          assert.equal(all.may8, MAY_8_UTC, match);
          assertWrittenSince(all.now, from, match);
          const may = await store.searchMessages("kayak", { ...MAY, match });
          assert.deepEqual(ids(may).sort(), ["may7", "may8"], match);
          const day = { since: "2023-05-08T00:00:00.000Z", until: "2023-05-09T00:00:00.000Z", match };
          assert.deepEqual(ids(await store.searchMessages("kayak", day)), ["may8"], match);
          const today = await store.searchMessages("kayak", { since: new Date(from), match });
          assert.deepEqual(ids(today), ["now"], match);
          const session = await store.session("m").searchMessages?.("kayak", 10, { ...MAY, match });
          if (session) assert.deepEqual(ids(session).sort(), ["may7", "may8"], match);
        }
        // A context turn reports its own time too.
        const [hit] = await store.searchMessages("rental", { context: 1 });
        assert.equal(hit?.context?.before[0]?.createdAt, MAY_8_UTC);
      }));

    test("history keeps the tree's order whatever the times; reads give the times back as Dates", () =>
      withStore(target, async (store) => {
        await seedMay(store);
        const history = await store.session("m").getHistory();
        assert.deepEqual(ids(history), ["may8", "may7", "now"]);
        const [first, second] = history.map((message) => message.createdAt);
        assert.ok(first instanceof Date && second instanceof Date);
        assert.equal(first.toISOString(), MAY_8_UTC);
        assert.equal(second.toISOString(), MAY_7.toISOString());
      }));

    test("an edit keeps the message's time, whatever createdAt the new version carries", () =>
      withStore(target, async (store) => {
        const from = await seedMay(store);
        const s = store.session("m");
        const later = new Date("2024-01-01T00:00:00.000Z");
        await s.updateMessage(msg("may7", "kayak rental moved", "assistant", { createdAt: later }));
        await s.updateMessage(msg("now", "kayak stored, edited", "user", { createdAt: later }));
        await s.upsertMessage?.(msg("may8", "the kayak trip was great", "user"));
        const times = timesOf(await store.searchMessages("kayak"));
        assert.equal(times.may7, MAY_7.toISOString());
        assert.equal(times.may8, MAY_8_UTC);
        assertWrittenSince(times.now, from, "an edit of a message stored without a time");
        assert.deepEqual(ids(await store.searchMessages("kayak", MAY)).sort(), ["may7", "may8"]);
      }));

    test("an import takes its createdAt option, else the message's own, else now", () =>
      withStore(target, async (store) => {
        const s = store.session("i");
        if (!s.importMessage) return;
        const from = Date.now() - 1;
        await s.importMessage(msg("own", "imported kayak note", "user", { createdAt: MAY_7 }));
        const given = "2023-05-20T12:00:00.000Z";
        await s.importMessage(msg("opt", "imported kayak plan", "user", { createdAt: MAY_7 }), {
          createdAt: given,
        });
        await s.importMessage(msg("bare", "imported kayak memo"));
        const times = timesOf(await store.searchMessages("kayak"));
        assert.equal(times.own, MAY_7.toISOString());
        assert.equal(times.opt, given);
        assertWrittenSince(times.bare, from, "an import without a time");
      }));

    test("a time in the future is kept as given; one before 4713 BC is refused, by every write", () =>
      withStore(target, async (store) => {
        const s = store.session("f");
        const future = "2999-12-31T23:59:59.000Z";
        await s.appendMessage(
          msg("later", "scheduled kayak reminder", "user", { createdAt: asCarried(future) }),
        );
        const hits = await store.searchMessages("kayak", { since: new Date() });
        assert.deepEqual(timesOf(hits), { later: future });
        const early = "-004713-06-01T00:00:00.000Z";
        await rejectsWithCode(
          s.appendMessage(msg("x1", "t", "user", { createdAt: asCarried(early) })),
          "INVALID_MESSAGE",
        );
        await rejectsWithCode(
          s.updateMessage(msg("later", "t", "user", { createdAt: new Date(-8.64e15) })),
          "INVALID_MESSAGE",
        );
        if (s.importMessage) {
          await rejectsWithCode(s.importMessage(msg("x2"), { createdAt: early }), "INVALID_ARGUMENT");
          // The earliest accepted time is stored and found as it is.
          const earliest = "-004712-01-01T00:00:00.000Z";
          await s.importMessage(msg("old", "an ancient kayak"), { createdAt: earliest });
          const old = await store.searchMessages("ancient", { until: "0001-01-01T00:00:00.000Z" });
          assert.deepEqual(timesOf(old), { old: earliest });
        }
        assert.deepEqual(ids(await s.getHistory()), s.importMessage ? ["later", "old"] : ["later"]);
      }));
  });
}
