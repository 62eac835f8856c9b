import assert from "node:assert/strict";
import type { StoreSearchOptions } from "../../contract/search.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer, type TransferItem } from "../../contract/transfer.js";
import { SEARCH_CANDIDATES } from "../../store/limits.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, toAsync, withStore } from "./harness.js";

/**
 * `count` messages of one session holding `text`, written in one import (appends would take seconds), each with
 * the role `roleOf` gives it and, where the store imports, the time `createdAt` (else now).
 */
async function bulkSession(
  store: SessionStore,
  sessionId: string,
  count: number,
  text: string,
  {
    createdAt = new Date().toISOString(),
    roleOf = () => "user",
    textOf = (i) => `${text} ${i}`,
  }: BulkOptions = {},
): Promise<void> {
  const message = (i: number) => msg(`${sessionId}-${i}`, textOf(i), roleOf(i));
  const items: TransferItem[] = [
    { kind: "session", session: { id: sessionId, info: null, leafId: `${sessionId}-${count - 1}` } },
    ...Array.from({ length: count }, (_, i): TransferItem => {
      const parentId = i === 0 ? null : `${sessionId}-${i - 1}`;
      const role = roleOf(i);
      return {
        kind: "message",
        message: { id: `${sessionId}-${i}`, parentId, role, createdAt, content: JSON.stringify(message(i)) },
      };
    }),
  ];
  if (hasTransfer(store)) {
    await store.transfer.importSession(toAsync(items));
    return;
  }
  const session = store.session(sessionId);
  for (let i = 0; i < count; i++) await session.appendMessage(message(i));
}

interface BulkOptions {
  createdAt?: string;
  roleOf?: (i: number) => string;
  textOf?: (i: number) => string;
}

/**
 * A question of sixteen content words of which only "alpha" matches: SQLite then reads each word's newest 250
 * matches (perTermCap), so a few hundred messages fill a window.
 */
const ALPHA_QUESTION = `alpha ${Array.from("abcdefghijklmno", (c) => `zzq${c}word`).join(" ")}`;
const ALPHA_WINDOW = 250;

/**
 * A session of twenty turns holding "common", then a long exploration (more matches than any window) branching
 * off the sixth, then the conversation goes on from the twentieth: every match newer than the path's lies on the
 * other branch. Ids are `${sessionId}-m${i}` on the path.
 */
async function exploredSession(store: SessionStore, sessionId: string): Promise<void> {
  const branch = 2 * SEARCH_CANDIDATES + 1;
  const message = (id: string, parentId: string | null, text: string): TransferItem => ({
    kind: "message",
    message: {
      id: `${sessionId}-${id}`,
      parentId: parentId === null ? null : `${sessionId}-${parentId}`,
      role: "user",
      createdAt: new Date().toISOString(),
      content: JSON.stringify(msg(`${sessionId}-${id}`, text)),
    },
  });
  const items: TransferItem[] = [
    { kind: "session", session: { id: sessionId, info: null, leafId: `${sessionId}-tail` } },
  ];
  for (let i = 0; i < 20; i++) items.push(message(`m${i}`, i === 0 ? null : `m${i - 1}`, `common old ${i}`));
  for (let i = 0; i < branch; i++) items.push(message(`b${i}`, i === 0 ? "m5" : `b${i - 1}`, `common ${i}`));
  items.push(message("tail", "m19", "the end"));
  if (hasTransfer(store)) {
    await store.transfer.importSession(toAsync(items));
    return;
  }
  const session = store.session(sessionId);
  for (const item of items.slice(1)) {
    if (item.kind !== "message") continue;
    await session.appendMessage(JSON.parse(item.message.content as string), item.message.parentId);
  }
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

    test("a role or time filter finds its matches however many newer matches of the word the store holds", () =>
      withStore(target, async (store) => {
        // Two early turns, the second an assistant's; then a session whose first turn is its only assistant
        // turn, behind more newer user matches than any window (it holds most of the store, so a search of it
        // keeps to it by lookup rather than by its token).
        const early = "2020-01-01T00:00:00.000Z";
        const roleOf = (i: number) => (i === 1 ? "assistant" : "user");
        await bulkSession(store, "early", 2, "an early common note", { createdAt: early, roleOf });
        const bigRoleOf = (i: number) => (i === 0 ? "assistant" : "user");
        await bulkSession(store, "big", 2 * SEARCH_CANDIDATES + 1, "common", { roleOf: bigRoleOf });
        for (const match of ["any", "all"] as const) {
          const found = async (options: StoreSearchOptions) =>
            ids(await store.searchMessages("common", { ...options, match })).sort();
          assert.deepEqual(await found({ role: "assistant" }), ["big-0", "early-1"], match);
          assert.deepEqual(await found({ role: "assistant", sessionId: "big" }), ["big-0"], match);
          assert.deepEqual(await found({ role: "assistant", sessionId: "early" }), ["early-1"], match);
          assert.equal((await found({ role: "user", limit: 5 })).length, 5, match);
          // Only an import can give a turn its time; a store without one wrote both turns now.
          if (!hasTransfer(store)) continue;
          assert.deepEqual(await found({ until: "2021-01-01T00:00:00Z" }), ["early-0", "early-1"], match);
          assert.deepEqual(await found({ since: early, until: "2021-01-01T00:00:00Z", role: "user" }), [
            "early-0",
          ]);
          assert.deepEqual(await found({ until: early }), [], match);
        }
      }));

    test("an active-branch search of a session finds its path's matches however many newer ones other branches hold", () =>
      withStore(target, async (store) => {
        await exploredSession(store, "s");
        const path = Array.from({ length: 20 }, (_, i) => `s-m${i}`).sort();
        for (const match of ["any", "all"] as const) {
          const hits = await store.searchMessages("common", {
            sessionId: "s",
            branch: "active",
            limit: 30,
            match,
          });
          assert.deepEqual(ids(hits).sort(), path, match);
          assert.ok(
            hits.every((hit) => hit.onActivePath),
            match,
          );
        }
      }));

    test("an active-branch search of many sessions finds their paths' matches however many newer ones other branches hold", () =>
      withStore(target, async (store) => {
        // Two sessions that each explored a long branch and came back, the older exploration behind the newer
        // one's matches, and a plain session older than both.
        await store.session("t").appendMessage(msg("t1", "a common plain note"));
        await exploredSession(store, "u");
        await exploredSession(store, "s");
        const paths = ["s", "u"].flatMap((s) => Array.from({ length: 20 }, (_, i) => `${s}-m${i}`));
        const expected = [...paths, "t1"].sort();
        for (const match of ["any", "all"] as const) {
          for (const scope of [{}, { sessionIds: ["s", "t", "u"] }]) {
            const hits = await store.searchMessages("common", {
              ...scope,
              branch: "active",
              limit: 50,
              match,
            });
            assert.deepEqual(ids(hits).sort(), expected, `${match} ${JSON.stringify(scope)}`);
          }
        }
      }));

    test("a search of a session holding most of the store finds its matches behind another session's newer ones", () =>
      withStore(target, async (store) => {
        // "big" holds over three quarters of the store (SQLite keeps to it by a lookup per match, not its token);
        // its only matches are its first five turns, and "small" then holds more newer matches than a window.
        const textOf = (i: number) => (i < 5 ? `alpha ${i}` : `filler ${i}`);
        await bulkSession(store, "big", 4 * ALPHA_WINDOW, "", { textOf });
        await bulkSession(store, "small", ALPHA_WINDOW + 10, "alpha");
        const expected = ["big-0", "big-1", "big-2", "big-3", "big-4"];
        for (const match of ["any", "all"] as const) {
          const question = match === "any" ? ALPHA_QUESTION : "alpha";
          const hits = await store.searchMessages(question, { sessionId: "big", limit: 100, match });
          assert.deepEqual(ids(hits).sort(), expected, match);
        }
      }));

    test("an active-branch search with a role or time filter finds the path's matches behind a left branch's", () =>
      withStore(target, async (store) => {
        // The path: a root, ten assistant turns (old, imported with their times), then ten newer user turns; off
        // the root, a longer exploration of both roles than a window, newer than the ten.
        const at = (k: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, k)).toISOString();
        const rows: [id: string, parent: string | null, role: string, text: string][] = [
          ["root", null, "system", "start"],
        ];
        for (let k = 0; k < 10; k++)
          rows.push([`old${k}`, k === 0 ? "root" : `old${k - 1}`, "assistant", `alpha old ${k}`]);
        for (let k = 0; k < 3 * ALPHA_WINDOW; k++)
          rows.push([
            `b${k}`,
            k === 0 ? "root" : `b${k - 1}`,
            k % 2 ? "assistant" : "user",
            `alpha branch ${k}`,
          ]);
        for (let k = 0; k < 10; k++)
          rows.push([`new${k}`, k === 0 ? "old9" : `new${k - 1}`, "user", `alpha new ${k}`]);
        const items: TransferItem[] = [{ kind: "session", session: { id: "s", info: null, leafId: "new9" } }];
        for (const [k, [id, parentId, role, text]] of rows.entries()) {
          const content = JSON.stringify(msg(id, text, role));
          items.push({ kind: "message", message: { id, parentId, role, createdAt: at(k), content } });
        }
        if (hasTransfer(store)) await store.transfer.importSession(toAsync(items));
        else
          for (const [id, parentId, role, text] of rows)
            await store.session("s").appendMessage(msg(id, text, role), parentId);
        const old = ["old5", "old6", "old7", "old8", "old9"];
        for (const scope of [{ sessionId: "s" }, {}, { sessionIds: ["s"] }]) {
          const found = async (options: StoreSearchOptions) =>
            ids(
              await store.searchMessages(ALPHA_QUESTION, {
                ...scope,
                ...options,
                branch: "active",
                limit: 5,
              }),
            ).sort();
          assert.deepEqual(await found({ role: "assistant" }), old, JSON.stringify(scope));
          // Only an import can give a turn its time.
          if (hasTransfer(store))
            assert.deepEqual(await found({ until: at(11) }), old, JSON.stringify(scope));
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

    test("overlays naming an unknown message cover nothing, and an older one behind many of them still marks", () =>
      withStore(target, async (store) => {
        const s = store.session("d");
        for (let i = 0; i < 10; i++) await s.appendMessage(msg(`m${i}`, `topic note ${i}`));
        const old = (await s.addCompaction("the start", "m0", "m5")).id;
        // Ten newer overlays, more than a search reads first, each with an endpoint no message has.
        for (let k = 0; k < 10; k++) await s.addCompaction(`nowhere ${k}`, k % 2 ? "ghost" : "m6", "ghost");
        const hits = await store.searchMessages("topic", { sessionId: "d", limit: 100 });
        assert.equal(hits.length, 10);
        for (const hit of hits) {
          assert.equal(hit.compactedBy, Number(hit.id.slice(1)) <= 5 ? old : undefined, hit.id);
        }
      }));
  });
}
