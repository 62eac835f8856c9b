// The import check pass refuses, before anything is written, a file whose owner fact names a session that is not
// registered to its owner (by the file or by the store, whose row an import keeps), and one whose facts belong to an
// encrypted owner whose key the store lacks; before, the write pass refused them after the file's sessions were in.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, test } from "node:test";
import { checkImport } from "../../src/cli/transfer/check.js";
import { writeExport } from "../../src/cli/transfer/export.js";
import { readImport } from "../../src/cli/transfer/import.js";
import { readLines } from "../../src/cli/transfer/lines.js";
import type { TransferCapableStore } from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";
import { tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());
const none = { increment() {}, setTotal() {}, stop() {} };
const read = (text: string) => () => readLines(Readable.from([text]), 1 << 24);

async function exported(store: TransferCapableStore, sessionIds: string[] = []): Promise<string> {
  let text = "";
  await writeExport(
    store,
    async (chunk) => {
      text += chunk;
    },
    { sessionIds, progress: none, countFirst: false },
  );
  return text;
}

/** Alice's session a1 (message m0) with her fact "boston" sourced in it, and bob's session b1. */
async function seeded(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  const manager = SessionManager.create(store);
  await manager.create("one", { id: "a1", owner: "alice" });
  await manager.append("a1", msg("m0", "Alice moved to Boston"));
  await manager.create("bob's", { id: "b1", owner: "bob" });
  await manager.append("b1", msg("k0", "Bob likes tea"));
  await store.facts.add({ owner: "alice" }, [
    {
      id: "boston",
      text: "Alice moved to Boston.",
      observedAt: 1,
      sources: [{ sessionId: "a1", messageId: "m0" }],
      producer: "function:t",
    },
  ]);
  return store;
}

/** The file's lines as records, changed by `edit`, written back. */
function edited(text: string, edit: (record: Record<string, unknown>) => Record<string, unknown> | null) {
  return text
    .split("\n")
    .map((line) => {
      if (line.trim() === "") return line;
      const changed = edit(JSON.parse(line) as Record<string, unknown>);
      return changed === null ? null : JSON.stringify(changed);
    })
    .filter((line) => line !== null)
    .join("\n");
}

const lineOf = (text: string, id: string) =>
  text.split("\n").findIndex((line) => line.includes('"type":"fact"') && line.includes(`"id":"${id}"`)) + 1;

test("an owner's fact naming a session the file registers to another owner is refused before writing", async () => {
  const from = await seeded();
  const to = new SqliteStore(":memory:");
  try {
    // The file says a1 is bob's: the import would register it so, and alice's fact would name bob's session.
    const text = edited(await exported(from), (r) =>
      r.type === "session" && r.id === "a1"
        ? { ...r, registry: { ...(r.registry as object), owner: "bob" } }
        : r,
    );
    await assert.rejects(checkImport(to, read(text)), (error: Error & { code?: string }) => {
      assert.equal(error.code, "INVALID_FILE");
      assert.equal(
        error.message,
        `line ${lineOf(text, "boston")}: fact "boston" of owner "alice" names session "a1", which is owner "bob"'s: an owner's facts name only its sessions`,
      );
      return true;
    });
    assert.deepEqual(await to.registry.list(), [], "nothing was written");
  } finally {
    await from.close();
    await to.close();
  }
});

test("the store's registry row decides a source session's owner: one it registers to another owner is refused", async () => {
  const from = await seeded();
  const to = new SqliteStore(":memory:");
  try {
    // The store already holds a1 as carol's (an import keeps a stored row): the file's alice would not be written.
    const manager = SessionManager.create(to);
    await manager.create("carol's", { id: "a1", owner: "carol" });
    await manager.append("a1", msg("m0", "Carol's own message"));
    const text = await exported(from);
    await assert.rejects(
      checkImport(to, read(text)),
      /fact "boston" of owner "alice" names session "a1", which is owner "carol"'s/,
    );
    // A session neither the file nor the store registers is refused too.
    const unregistered = edited(text, (r) =>
      r.type === "session" && r.id === "a1" ? { ...r, registry: null } : r,
    );
    await assert.rejects(
      checkImport(new SqliteStore(":memory:"), read(unregistered)),
      /fact "boston" of owner "alice" names session "a1", which is not registered/,
    );
    assert.deepEqual(
      (await to.registry.list()).map((s) => s.id),
      ["a1"],
      "nothing was written",
    );
    // The whole file passes on an empty store and imports.
    const empty = new SqliteStore(":memory:");
    await checkImport(empty, read(text));
    assert.deepEqual((await readImport(empty, read(text)())).facts, { inserted: 1, skipped: 0 });
    await empty.close();
  } finally {
    await from.close();
    await to.close();
  }
});

/** A SQLite file holding alice's session `id` sealed under her key, opened again with a keyring that lacks it. */
async function keyless(name: string, id: string): Promise<SqliteStore> {
  const file = tmp.path(name);
  const key = new Uint8Array(32).fill(5);
  const keyed = new SqliteStore(file, { keyring: { key: (owner) => (owner === "alice" ? key : undefined) } });
  const manager = SessionManager.create(keyed);
  await manager.create("sealed", { id, owner: "alice" });
  await manager.append(id, msg(`${id}-m`, "sealed words"));
  await keyed.close();
  return new SqliteStore(file, { keyring: { key: () => undefined } });
}

test("an encrypted owner's facts are refused up front by a store that lacks its key", async () => {
  const from = await seeded();
  const whole = await exported(from);
  // The file brings alice's a1 and her fact, bob's b1; the store holds other sealed content of alice's.
  const fresh = { text: whole, store: await keyless("fresh.db", "z1") };
  // The file brings bob's b1 and alice's fact on her a1, which the store holds sealed.
  const stored = {
    text: edited(whole, (r) => {
      if ((r.type === "session" && r.id === "a1") || (r.type === "message" && r.session === "a1"))
        return null;
      return r.type === "end" ? { ...r, sessions: 1, messages: 1 } : r;
    }),
    store: await keyless("stored.db", "a1"),
  };
  try {
    for (const { text, store } of [fresh, stored]) {
      await assert.rejects(checkImport(store, read(text)), (error: Error & { code?: string }) => {
        assert.equal(error.code, "DECRYPT_FAILED");
        assert.match(
          error.message,
          new RegExp(
            `^line ${lineOf(text, "boston")}: fact "boston" of owner "alice" cannot be stored: .*has no key`,
          ),
        );
        return true;
      });
      assert.equal(await store.registry.get("b1"), null, "bob's session was not written");
    }
  } finally {
    await from.close();
    await fresh.store.close();
    await stored.store.close();
  }
});
