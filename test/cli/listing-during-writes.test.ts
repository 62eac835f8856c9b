// The CLI's whole-store passes while sessions are written: the store lists sessions by activity, so a session written
// after it was read moves behind the others and is listed again; an export holds it once and stats count it once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { storeStats } from "../../src/cli/inspect/stats.js";
import { writeExport } from "../../src/cli/transfer/export.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";

const noProgress = { increment() {}, setTotal() {}, stop() {} };

/** A store of more sessions than it lists in one page (1,000), whose first session read is written once it is read. */
async function storeWrittenWhileListed(): Promise<{
  store: SqliteStore;
  names: string[];
  written: () => boolean;
}> {
  const store = new SqliteStore(":memory:");
  const names = Array.from({ length: 1_100 }, (_, i) => `s${String(i).padStart(4, "0")}`);
  for (const id of names) await store.registry.create({ id, name: id });
  await store.session("s0000").appendMessage(msg("m1"));
  const sessionIds = store.transfer.sessionIds.bind(store.transfer);
  let written = false;
  store.transfer.sessionIds = () =>
    (async function* () {
      for await (const id of sessionIds()) {
        yield id;
        if (!written) {
          written = true;
          await store.registry.touch(id);
        }
      }
    })();
  return { store, names, written: () => written };
}

test("a session written during an export is in the file once", async () => {
  const { store, names, written } = await storeWrittenWhileListed();
  try {
    let text = "";
    const counts = await writeExport(
      store,
      async (chunk) => {
        text += chunk;
      },
      { sessionIds: [], progress: noProgress as never, countFirst: true },
    );
    const sessions = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; id?: string })
      .filter((record) => record.type === "session")
      .map((record) => record.id);
    assert.ok(written());
    assert.deepEqual([...sessions].sort(), names);
    assert.equal(counts.sessions, names.length);
  } finally {
    await store.close();
  }
});

test("stats count a session written while they run once", async () => {
  const { store, names, written } = await storeWrittenWhileListed();
  try {
    const stats = await storeStats({
      store,
      kind: "sqlite",
      location: ":memory:",
      close: () => store.close(),
    });
    assert.ok(written());
    assert.deepEqual(stats.sessions, { total: names.length, registered: names.length, unregistered: 0 });
    assert.equal(stats.messages, 1);
  } finally {
    await store.close();
  }
});
