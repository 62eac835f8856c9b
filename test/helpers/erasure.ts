// What the erasure tests write: an owner's sessions holding a known string in messages, an overlay and a cached
// prompt, and another owner's session that must stay whole.
import assert from "node:assert/strict";
import { hasContextStorage } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MARKER } from "./purge.js";

/** Alice's `count` sessions with the marker everywhere, and bob's session without it; answers the manager. */
export async function seedOwners(store: RegistryCapableStore, count = 3) {
  const manager = SessionManager.create(store);
  const alice: string[] = [];
  for (let i = 0; i < count; i++) {
    const { id } = await manager.create(`alice ${i}`, { owner: "alice" });
    for (let m = 0; m < 5; m++) {
      await manager.append(id, {
        id: `a${i}-${m}`,
        role: "user",
        parts: [{ type: "text", text: `alice says ${MARKER} ${m}` }],
      });
    }
    await manager.addCompaction(id, `summary ${MARKER}`, `a${i}-0`, `a${i}-1`);
    if (hasContextStorage(store)) await store.blocks.setBlock(`_system_prompt_${id}`, `prompt ${MARKER}`);
    alice.push(id);
  }
  const { id: bob } = await manager.create("bob", { owner: "bob" });
  await manager.append(bob, { id: "b-0", role: "user", parts: [{ type: "text", text: "bob kept words" }] });
  return { manager, alice, bob };
}

/** Every one of `ids` is either whole (its five messages) or gone (no row, no message): never half there. */
export async function wholeOrGone(manager: SessionManager, ids: readonly string[]): Promise<number> {
  let whole = 0;
  for (const id of ids) {
    const info = await manager.get(id);
    const messages = (await manager.store.session(id).getHistory()).length;
    if (info) {
      assert.equal(messages, 4, `session ${id} is whole (overlay + 3 messages on its path)`);
      whole++;
    } else {
      assert.equal(messages, 0, `session ${id} is gone`);
    }
  }
  return whole;
}
