// `agent-session ls` shows the pin (issue #92, item 4): a PINNED column when a listed session is pinned, and
// `pinned` in every --json row; a store without pins lists as before.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { SessionManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

const hi = (id: string) => ({ id, role: "user", parts: [{ type: "text" as const, text: "hi" }] });

test("ls and ls --json show which sessions are pinned", async () => {
  const db = tmp.path("pins.db");
  const store = new SqliteStore(db);
  const manager = new SessionManager(store);
  for (const id of ["kept", "loose"]) {
    await manager.create(id, { id });
    await manager.getSession(id).appendMessage(hi(`${id}-m`));
  }
  await manager.getSession("unregistered").appendMessage(hi("u-m"));
  const unpinnedLines = (await runCli(["ls", "--db", db])).stdout.trimEnd().split("\n");
  assert.doesNotMatch(unpinnedLines[0]!, /PINNED/, "no pin: no column");
  await manager.pin("kept");
  await store.close();

  const lines = (await runCli(["ls", "--db", db])).stdout.trimEnd().split("\n");
  assert.match(lines[0]!, /^ID\s+NAME\s+MESSAGES.*\sPINNED$/);
  assert.match(lines.find((l) => l.startsWith("kept"))!, /\syes$/);
  assert.match(lines.find((l) => l.startsWith("loose"))!, /\s-$/);
  const rows = parseJson<{ id: string; pinned: boolean }[]>(await runCli(["ls", "--json", "--db", db]));
  assert.deepEqual(rows.map((r) => [r.id, r.pinned]).sort(), [
    ["kept", true],
    ["loose", false],
    ["unregistered", false],
  ]);
});
