// An export while sessions are written: the store lists sessions by activity, so a session written after it was
// exported moves behind the others and is listed again; the file still holds it once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { writeExport } from "../../src/cli/transfer/export.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";

const noProgress = { increment() {}, setTotal() {}, stop() {} };

test("a session written during an export is in the file once", async () => {
  const store = new SqliteStore(":memory:");
  try {
    // More sessions than the store lists in one page (1,000), so the listing reads again after the write.
    const names = Array.from({ length: 1_100 }, (_, i) => `s${String(i).padStart(4, "0")}`);
    for (const id of names) await store.registry.create({ id, name: id });
    await store.session("s0000").appendMessage(msg("m1"));
    // The first session exported is written to as soon as its export begins.
    const exportSession = store.transfer.exportSession.bind(store.transfer);
    let written = false;
    store.transfer.exportSession = (id) => {
      if (!written) {
        written = true;
        return (async function* () {
          await store.registry.touch(id);
          yield* exportSession(id);
        })();
      }
      return exportSession(id);
    };
    let text = "";
    const counts = await writeExport(
      store,
      async (chunk) => {
        text += chunk;
      },
      { sessionIds: [], progress: noProgress as never, countFirst: false },
    );
    const sessions = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; id?: string })
      .filter((record) => record.type === "session")
      .map((record) => record.id);
    assert.ok(written);
    assert.deepEqual([...sessions].sort(), names);
    assert.equal(counts.sessions, names.length);
  } finally {
    await store.close();
  }
});
