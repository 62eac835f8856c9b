// A store with two owners' sessions, blocks whose keys collide across them, and an unregistered session.
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import { SessionManager } from "../../src/manager/manager.js";

const text = (id: string, role: "user" | "assistant", body: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text: body }],
});

/** Alice owns `a` (and block `memory`), Bob owns `team_a` (block `notes`, stored as `notes_team_a`). */
export async function fillOwners<S extends RegistryCapableStore & ContextCapableStore>(store: S): Promise<S> {
  const manager = new SessionManager(store);
  await manager.forOwner("alice").create("Alice's deploys", { id: "a" });
  await manager.append("a", text("a-u1", "user", "When do we deploy the payments service?"));
  await manager.append("a", text("a-a1", "assistant", "Deploy on Thursday; never on a Friday."));
  await manager.append("a", text("a-u2", "user", "Thursday it is."));
  await manager.forOwner("bob").create("Bob's deploys", { id: "team_a" });
  await manager.append("team_a", text("b-u1", "user", "Bob deploys the payments service on Monday."));
  await store.blocks.setBlock("memory_a", "Alice prefers Thursday deploys.", { sessionId: "a" });
  await store.blocks.setBlock("notes_team_a", "Bob's secret notes.", { sessionId: "team_a" });
  // Written through a plain Session: no registry row, so no owner's.
  await store.session("loose").appendMessage(text("l-u1", "user", "An unregistered deploy note."));
  return store;
}
