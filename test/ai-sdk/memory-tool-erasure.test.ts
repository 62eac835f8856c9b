// Erasure reaches the memory tool's directories: a session's erasure removes the session's, an owner's erasure the
// owner's (counted in the receipt), and after purge() no byte of their files is left in the SQLite files.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type MemoryToolCommand, memoryTool } from "../../src/ai-sdk/index.js";
import { SessionManager, SqliteStore } from "../../src/index.js";
import { MARKER, markersInFiles, sqliteFiles, total } from "../helpers/purge.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-memory-erasure-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const create = (tool: ReturnType<typeof memoryTool>, path: string) =>
  tool.execute({ command: "create", path, file_text: `${MARKER} ${path}` } as MemoryToolCommand);

test("erase(id) removes the session's memory directory; eraseOwner the owner's; purge leaves no byte of either", async () => {
  const path = join(dir, "memories.db");
  const store = new SqliteStore(path);
  const manager = new SessionManager(store);
  const kept = await manager.create("kept", { owner: "bob" });
  const erased = await manager.create("erased", { owner: "alice" });
  const sessionTool = memoryTool({ store, sessionId: erased.id });
  const ownerTool = memoryTool({ store, owner: "alice" });
  const bobTool = memoryTool({ store, owner: "bob" });
  await create(sessionTool, "/memories/session.md");
  await create(ownerTool, "/memories/owner.md");
  await bobTool.execute({ command: "create", path: "/memories/bob.md", file_text: "bob's" });

  await manager.erase(erased.id);
  assert.equal((await sessionTool.files()).size, 0, "the session's directory went with it");
  assert.deepEqual([...(await ownerTool.files()).keys()], ["/memories/owner.md"], "the owner's stays");

  const receipt = await manager.eraseOwner("alice");
  assert.deepEqual(receipt.sessionIds, [], "alice's one session was erased already");
  assert.equal(receipt.blocks, 1);
  assert.equal((await ownerTool.files()).size, 0);
  assert.deepEqual([...(await bobTool.files()).keys()], ["/memories/bob.md"], "another owner's stays");
  await assert.rejects(manager.eraseOwner("alice"), { code: "NOT_FOUND" });

  const report = await store.purge();
  assert.equal(report.complete, true, JSON.stringify(report));
  assert.equal(total(markersInFiles(sqliteFiles(path))), 0);
  assert.ok(await manager.get(kept.id));
  await manager.close();
  await store.close();
});
