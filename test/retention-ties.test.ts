import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, mock, test } from "node:test";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { SessionManager } from "../src/manager/manager.js";
import { MemoryStore } from "../src/memory/store.js";
import { SqliteStore } from "../src/sqlite/store.js";

const HOUR = 3_600_000;

// Sessions active within the same millisecond tie on `updated_at`: the sweep must keep the one the registry lists
// first (the last written), not the first by id, or a pinned older session takes the newest's slot and the newest
// is erased. The clock is frozen so every write lands in one millisecond, as on a fast machine.
async function tiedOwner(store: RegistryCapableStore): Promise<void> {
  const manager = SessionManager.create(store);
  const ids: string[] = [];
  // Written r1 first; a scan (by id) reads r1 first too.
  for (const tag of ["r1", "r2", "r3", "r4", "r5"]) {
    ids.push((await manager.create(`dave ${tag}`, { owner: "dave", id: `s-${tag}` })).id);
  }
  await manager.pin(ids[0] ?? "");
  const now = new Date(Date.now() + 2 * HOUR);
  const report = await manager.sweep({ maxAgeMs: HOUR, keepNewestPerOwner: 1 }, { now });
  assert.deepEqual(report.erased.sessionIds.sort(), ["s-r2", "s-r3", "s-r4"]);
  assert.deepEqual((await manager.list()).map((s) => s.id).sort(), ["s-r1", "s-r5"]);
}

describe("retention with activity times that tie", () => {
  test("memory keeps the last written of the owner's sessions", async (t) => {
    mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-01-01T00:00:00Z") });
    t.after(() => mock.timers.reset());
    await tiedOwner(new MemoryStore());
  });

  test("SQLite keeps the last written of the owner's sessions", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), "retention-ties-"));
    const store = new SqliteStore(join(dir, "s.db"));
    t.after(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-01-01T00:00:00Z") });
    t.after(() => mock.timers.reset());
    await tiedOwner(store);
  });
});
