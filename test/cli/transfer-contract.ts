// The contract of the optional `store.transfer` capability, runnable against any backend: lossless export and
// import (ids, tree links, timestamps, overlays, registry rows, blocks, entries), stable order, idempotency.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { hasContextStorage } from "../../src/contract/context.js";
import type { SessionMessage } from "../../src/contract/message.js";
import { hasSessionRegistry } from "../../src/contract/registry.js";
import type { SessionStore } from "../../src/contract/store.js";
import {
  hasTransfer,
  type TransferCapableStore,
  type TransferItem,
  type TransferRow,
} from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { estimateMessageTokens } from "../../src/message/tokens.js";
import { Session } from "../../src/session/session.js";
import { type ContractTarget, msg, rejectsWithCode, withStore } from "../../src/testing/contract/harness.js";

/** Everything a store exports, collected (fine for test-sized stores). */
export interface Collected {
  sessions: TransferItem[][];
  rows: TransferRow[];
}

/** The full export of a store, in its export order. */
export async function collect(store: TransferCapableStore): Promise<Collected> {
  const sessions: TransferItem[][] = [];
  for await (const id of store.transfer.sessionIds()) {
    const items: TransferItem[] = [];
    for await (const item of store.transfer.exportSession(id)) items.push(item);
    sessions.push(items);
  }
  const rows: TransferRow[] = [];
  for await (const row of store.transfer.exportRows()) rows.push(row);
  return { sessions, rows };
}

async function* iterate<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/** Imports a collected export; returns the summed counts. */
export async function importAll(store: TransferCapableStore, data: Collected) {
  const totals = { registered: 0, inserted: 0, skipped: 0 };
  for (const items of data.sessions) {
    const result = await store.transfer.importSession(iterate(items));
    if (result.registered) totals.registered++;
    totals.inserted += result.messages.inserted + result.compactions.inserted;
    totals.skipped += result.messages.skipped + result.compactions.skipped;
  }
  const rows = await store.transfer.importRows(iterate(data.rows));
  totals.inserted += rows.inserted;
  totals.skipped += rows.skipped;
  return totals;
}

/** A payload big enough to be offloaded (see MIN_OFFLOAD_CHARS). */
const SCREENSHOT = Buffer.alloc(4000, 42).toString("base64");

const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

/**
 * A store worth moving: branches from regenerate and edit, a splice (deleted message), an overlay with details,
 * usage, auto-wired blocks and a frozen prompt, a search entry, ids with `_` and non-ASCII characters, and
 * sessions written without registering them (one of them the unnamed default session "").
 */
export async function seedRich(store: SessionStore): Promise<void> {
  assert.ok(hasSessionRegistry(store) && hasContextStorage(store));
  const manager = SessionManager.create(store)
    .withContext("memory", { description: "facts", maxTokens: 500 })
    .withCachedPrompt();
  await manager.create("Plans", { id: "plans", model: "m1", source: "test" });
  await manager.append("plans", msg("u1", "deploy on friday?"));
  await manager.append(
    "plans",
    msg("a1", "better thursday", "assistant", { metadata: { tokens: 3, n: null } }),
  );
  await manager.append("plans", msg("a2", "friday is fine", "assistant"), "u1");
  await manager.append("plans", msg("u2", "ok thursday 🚀"));
  await manager.append("plans", msg("gone", "to be deleted", "assistant"));
  // An image offloaded to the attachment store, and the same bytes again in a tool output of another session.
  await manager.append("plans", {
    id: "a3",
    role: "assistant",
    parts: [
      { type: "text", text: "booked" },
      { type: "file", mediaType: "image/png", url: `data:image/png;base64,${SCREENSHOT}` },
    ],
  } as SessionMessage);
  await manager.deleteMessages("plans", ["gone"]);
  await manager.addCompaction("plans", "they chose thursday", "u1", "a2", {
    coveredMessages: 2,
    extra: { a: 1 },
  });
  await manager.addUsage("plans", 100, 20, 0.0123, { cacheReadTokens: 7 });
  await manager.getSession("plans").replaceContextBlock("memory", "likes thursdays");
  await manager.getSession("plans").freezeSystemPrompt();
  await tick();
  await manager.create("Ünïcödé", { id: "session_ü_2", parentSessionId: "plans" });
  await manager.append("session_ü_2", {
    id: "t1",
    role: "assistant",
    parts: [
      {
        type: "tool-lookup",
        toolCallId: "c1",
        state: "output-available",
        input: { q: 1 },
        output: { type: "content", value: [{ type: "media", data: SCREENSHOT, mediaType: "image/png" }] },
      },
    ],
  });
  await tick();
  await manager.create("empty", { id: "empty" });
  await Session.create(store).forSession("zeta").appendMessage(msg("z1", "unregistered zeta"));
  await Session.create(store).forSession("").appendMessage(msg("d1", "the default session"));
  await Session.create(store).forSession("Älpha").appendMessage(msg("x1", "unregistered, non-ASCII id"));
  await store.entries.setEntry("notes", "k2", "second entry");
  await store.entries.setEntry("notes", "k1", "first entry");
}

/** What an application can observe of a store through the public API (transfer aside). */
export async function observe(store: SessionStore, ids: readonly string[]) {
  const view: Record<string, unknown> = {};
  for (const id of ids) {
    const provider = store.session(id);
    const leaf = await provider.getLatestLeaf();
    const compactions = await provider.getCompactions();
    const branches = await provider.getBranches("u1");
    const histories: Record<string, unknown> = {};
    for (const leafId of ["a1", "a3", "t1", "z1", "d1", "x1"]) {
      if (await provider.getMessage(leafId)) {
        const history = await provider.getHistory(leafId);
        histories[leafId] = {
          history,
          length: await provider.getPathLength(leafId),
          // What compaction uses: the backend's running totals where it has them, else the estimate of the history.
          tokens: provider.getContextTokens
            ? await provider.getContextTokens(leafId)
            : estimateMessageTokens(history),
          stats: await provider.getHistoryRowStats?.(leafId),
        };
      }
    }
    view[id] = { leaf: leaf?.id ?? null, compactions, branches, histories };
  }
  if (hasSessionRegistry(store)) view.registry = await store.registry.list();
  const hits = await store.searchMessages("thursday", { branch: "all" });
  view.search = hits.map((h) => [h.sessionId, h.id, h.onActivePath, h.createdAt]).sort();
  if (hasContextStorage(store)) view.entries = await store.entries.searchEntries("notes", "entry");
  return view;
}

const IDS = ["plans", "session_ü_2", "empty", "zeta", "", "Älpha"];

/** Runs the transfer contract against one backend (MemoryStore is the other side of cross-backend checks). */
export function runTransferContract(target: ContractTarget): void {
  const withTransfer = (
    t: { skip(reason: string): void },
    body: (store: TransferCapableStore) => Promise<void>,
  ) =>
    withStore(target, async (store) => {
      if (!hasTransfer(store)) return t.skip(`the ${store.backend} store has no store.transfer yet`);
      await body(store);
    });

  describe(`transfer contract: ${target.name}`, () => {
    test("export → import → export is identical, to and from the reference memory store", async (t) => {
      await withTransfer(t, async (store) => {
        await seedRich(store);
        const original = await collect(store);
        const memory = new MemoryStore();
        await importAll(memory, original);
        assert.deepEqual(await collect(memory), original, "through memory");
        assert.deepEqual(await observe(memory, IDS), await observe(store, IDS), "observable state in memory");
        await withStore(target, async (copy) => {
          assert.ok(hasTransfer(copy));
          await importAll(copy, await collect(memory));
          assert.deepEqual(await collect(copy), original, "back into this backend");
          assert.deepEqual(
            await observe(copy, IDS),
            await observe(store, IDS),
            "observable state after import",
          );
        });
      });
    });

    test("the export order: registered oldest activity first, then unregistered by UTF-8 bytes; parents first", async (t) => {
      await withTransfer(t, async (store) => {
        await seedRich(store);
        const { sessions, rows } = await collect(store);
        const order = sessions.map((items) => (items[0]?.kind === "session" ? items[0].session.id : "?"));
        // Registered sessions come oldest activity first: the registry's list() reversed.
        assert.ok(hasSessionRegistry(store));
        const registered = (await store.registry.list()).map((info) => info.id).reverse();
        assert.deepEqual(order, [...registered, "", "zeta", "Älpha"]);
        for (const items of sessions) {
          const seen = new Set<string>();
          for (const item of items) {
            if (item.kind !== "message") continue;
            if (item.message.parentId !== null) assert.ok(seen.has(item.message.parentId), "parent first");
            seen.add(item.message.id);
          }
        }
        const keys = rows.map((r) => (r.kind === "block" ? `b:${r.key}` : `e:${r.label}:${r.key}`));
        assert.deepEqual(keys, ["b:_system_prompt_plans", "b:memory_plans", "e:notes:k2", "e:notes:k1"]);
      });
    });

    test("a session registered once the registered ones are listed is still listed, as a session holding data", async (t) => {
      await withTransfer(t, async (store) => {
        assert.ok(hasSessionRegistry(store));
        await store.registry.create({ id: "a", name: "a" });
        await store.registry.create({ id: "b", name: "b" });
        // Written through a plain Session: data, no registry row yet.
        await store.session("late").appendMessage(msg("m1", "hello"));
        const ids = store.transfer.sessionIds()[Symbol.asyncIterator]();
        assert.deepEqual([(await ids.next()).value, (await ids.next()).value], ["a", "b"]);
        // Registered after the listing read past every registered session: its place is behind the last one read.
        await store.registry.create({ id: "late", name: "late" });
        const rest: string[] = [];
        for (let next = await ids.next(); !next.done; next = await ids.next()) rest.push(next.value);
        assert.deepEqual(rest, ["late"]);
      });
    });

    test("importing the same data twice writes nothing the second time", async (t) => {
      await withTransfer(t, async (store) => {
        await seedRich(store);
        const data = await collect(store);
        const memory = new MemoryStore();
        const first = await importAll(memory, data);
        assert.equal(first.skipped, 0);
        const second = await importAll(memory, data);
        assert.equal(second.inserted, 0);
        assert.equal(second.registered, 0);
        assert.equal(second.skipped, first.inserted);
        assert.deepEqual(await collect(memory), data);
        const again = await importAll(store, data);
        assert.equal(again.inserted, 0, "into the store it came from");
      });
    });

    test("long sessions and many blocks cross every page boundary in order", async (t) => {
      await withTransfer(t, async (store) => {
        const a = store.session("long");
        const b = store.session("other");
        for (let i = 0; i < 2500; i++) {
          // Interleaved writes: storage order of one session is not contiguous.
          await a.appendMessage(msg(`m${i}`), i % 7 === 3 ? `m${i - 2}` : undefined);
          if (i % 5 === 0) await b.appendMessage(msg(`o${i}`));
        }
        assert.ok(hasContextStorage(store));
        for (let i = 0; i < 1200; i++) await store.blocks.setBlock(`k${String(i).padStart(4, "0")}`, `v${i}`);
        const data = await collect(store);
        const long = data.sessions.find(
          (items) => items[0]?.kind === "session" && items[0].session.id === "long",
        )!;
        assert.equal(long.filter((i) => i.kind === "message").length, 2500);
        assert.equal(data.rows.length, 1200);
        const memory = new MemoryStore();
        await importAll(memory, data);
        assert.deepEqual(await collect(memory), data);
        assert.deepEqual(await memory.session("long").getHistory(), await a.getHistory());
      });
    });

    test("an import into an existing session adds what is missing and moves the leaf to the file's", async (t) => {
      await withTransfer(t, async (store) => {
        const source = new MemoryStore();
        const provider = source.session("s");
        for (const id of ["a", "b", "c"]) await provider.appendMessage(msg(id));
        await provider.appendMessage(msg("b2"), "a");
        const data = await collect(source);
        await store.session("s").appendMessage(msg("a", "local version of a"));
        await store.session("s").appendMessage(msg("local"));
        const result = await store.transfer.importSession(iterate(data.sessions[0]!));
        assert.deepEqual(result.messages, { inserted: 3, skipped: 1 });
        assert.equal((await store.session("s").getMessage("a"))?.parts[0]?.text, "local version of a");
        assert.equal((await store.session("s").getLatestLeaf())?.id, "b2");
        assert.deepEqual(
          (await store.session("s").getBranches("a")).map((m) => m.id),
          ["local", "b", "b2"],
        );
      });
    });

    test("a stream must start with its header, and parents must come before children", async (t) => {
      await withTransfer(t, async (store) => {
        const message = { id: "x", parentId: "missing", role: "user", createdAt: new Date().toISOString() };
        const content = JSON.stringify(msg("x"));
        await rejectsWithCode(
          store.transfer.importSession(
            iterate<TransferItem>([{ kind: "message", message: { ...message, content } }]),
          ),
          "INVALID_ARGUMENT",
        );
        await rejectsWithCode(
          store.transfer.importSession(
            iterate<TransferItem>([
              { kind: "session", session: { id: "s", info: null, leafId: "x" } },
              { kind: "message", message: { ...message, content } },
            ]),
          ),
          "PARENT_NOT_FOUND",
        );
        assert.equal(await store.transfer.footprint("nobody"), null);
      });
    });
  });
}
