import assert from "node:assert/strict";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import { hasTransfer, type SessionStore, type TransferItem } from "../../store/types.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, toAsync, withStore } from "./harness.js";

/** `count` messages of one session holding `text`, written in one import (appends would take seconds). */
async function bulkSession(
  store: SessionStore,
  sessionId: string,
  count: number,
  text: string,
): Promise<void> {
  const createdAt = new Date().toISOString();
  const content = (i: number) => JSON.stringify(msg(`${sessionId}-${i}`, `${text} ${i}`));
  const items: TransferItem[] = [
    { kind: "session", session: { id: sessionId, info: null, leafId: `${sessionId}-${count - 1}` } },
    ...Array.from({ length: count }, (_, i): TransferItem => {
      const parentId = i === 0 ? null : `${sessionId}-${i - 1}`;
      return {
        kind: "message",
        message: { id: `${sessionId}-${i}`, parentId, role: "user", createdAt, content: content(i) },
      };
    }),
  ];
  if (hasTransfer(store)) {
    await store.transfer.importSession(toAsync(items));
    return;
  }
  const session = store.session(sessionId);
  for (let i = 0; i < count; i++) await session.appendMessage(msg(`${sessionId}-${i}`, `${text} ${i}`));
}

/** Searches in stores where the newest matches are not the ones asked for, and in sessions with many overlays. */
export function searchScaleSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("search at scale", () => {
    test("a set of sessions is searched in itself, however many newer matches other sessions hold", () =>
      withStore(target, async (store) => {
        await store.session("a").appendMessage(msg("a1", "an old common note"));
        await store.session("b").appendMessage(msg("b1", "another old common note"));
        await store.session("b").appendMessage(msg("b2", "unrelated"));
        // More newer matches than any backend's candidate window (Postgres takes twice SEARCH_CANDIDATES).
        await bulkSession(store, "big", 2 * SEARCH_CANDIDATES + 1, "common");
        for (const match of ["any", "all"] as const) {
          const hits = await store.searchMessages("common", { sessionIds: ["a", "b"], match });
          assert.deepEqual(ids(hits).sort(), ["a1", "b1"], match);
          assert.deepEqual(await store.searchMessages("common", { sessionIds: [], match }), [], match);
        }
      }));

    test("each hit names the newest overlay covering it; a branch off a covered range is not covered", () =>
      withStore(target, async (store) => {
        const s = store.session("o");
        for (let i = 0; i < 66; i++) await s.appendMessage(msg(`m${i}`, `topic note ${i}`));
        // Twenty overlays of three messages each, then a newer one over the first twelve messages.
        const ranges: string[] = [];
        for (let k = 0; k < 20; k++) {
          ranges.push((await s.addCompaction(`summary ${k}`, `m${3 * k}`, `m${3 * k + 2}`)).id);
        }
        const wide = (await s.addCompaction("summary of the start", "m0", "m11")).id;
        // A reply to m4 on a branch of its own: inside no covered stretch of the path.
        await s.appendMessage(msg("b1", "topic on a branch"), "m4");
        const hits = await store.searchMessages("topic", { sessionId: "o", limit: 100 });
        assert.equal(hits.length, 67);
        for (const hit of hits) {
          const i = hit.id === "b1" ? -1 : Number(hit.id.slice(1));
          const expected = i < 0 || i >= 60 ? undefined : i < 12 ? wide : ranges[Math.floor(i / 3)];
          assert.equal(hit.compactedBy, expected, hit.id);
        }
      }));
  });
}
