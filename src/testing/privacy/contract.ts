/**
 * The privacy contract (docs/PRIVACY.md): for every erasure path (`erase`, `eraseOwner`, `sweep`, `delete`), an
 * owner's session written in every place a session's data goes (its name, messages, an overlay, a cached prompt, a
 * streamed answer), its statistics sampled, then erased that way and purged, leaves no byte of it that the target's
 * `traces` finds (a file's bytes, a relation's pages, the statistics), while another owner's pinned session stays.
 * The target says how to look at its store's storage: the suite cannot know where a backend keeps its bytes.
 */
import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { hasStreamStore } from "../../contract/streams.js";
import { SessionManager } from "../../manager/manager.js";
import type { PurgeCapableStore } from "../../store/purge.js";
import { suiteOf, type TestApi } from "../runner.js";

/** A store of the suite and how to read what its storage holds. */
export interface PrivacyInstance {
  store: RegistryCapableStore & PurgeCapableStore;
  /** How many places of the store's storage (file bytes, pages, statistics) hold `text`. */
  traces(text: string): Promise<number>;
  /** Samples statistics as the database would by itself (SQLite's ANALYZE, Postgres's autovacuum); optional. */
  analyze?(): Promise<void>;
  /** Closes the store and removes its storage. */
  close(): Promise<void>;
}

/** A backend under the privacy contract. */
export interface PrivacyTarget {
  name: string;
  /** A fresh, empty store. */
  create(): Promise<PrivacyInstance>;
  /** Purges until complete or gives up (a shared server's other transactions can hold a purge back); default once. */
  purge?(store: PurgeCapableStore): Promise<{ complete: boolean }>;
}

/** The words the suite writes, each a single term (search indexes keep terms whole). */
const SECRET = "zqxprivacysecretq";
const NAME = "zqxprivacynameq";
const OWNER = "zqxprivacyownerq";

type Path = (manager: SessionManager, id: string) => Promise<unknown>;

const PATHS: readonly [string, Path][] = [
  ["erase", (manager, id) => manager.erase(id)],
  ["eraseOwner", (manager) => manager.eraseOwner(OWNER)],
  ["sweep", (manager) => manager.sweep({ maxAgeMs: 1 })],
  ["delete", (manager, id) => manager.delete(id)],
];

/** Writes the owner's session in every place a session's data goes, and the kept session; answers its id. */
async function seed(instance: PrivacyInstance, manager: SessionManager): Promise<string> {
  const { store } = instance;
  const kept = await manager.create("kept notes", { owner: "keeper" });
  await manager.append(kept.id, { id: "k", role: "user", parts: [{ type: "text", text: "kept words" }] });
  await manager.pin(kept.id);
  const { id } = await manager.create(`${NAME} chat`, { owner: OWNER });
  for (let i = 0; i < 5; i++) {
    await manager.append(id, {
      id: `m${i}`,
      role: "user",
      parts: [{ type: "text", text: `${SECRET} ${i}` }],
    });
  }
  await manager.addCompaction(id, `summary ${SECRET}`, "m0", "m1");
  if (hasContextStorage(store)) {
    await store.blocks.setBlock(`_system_prompt_${id}`, `prompt ${SECRET}`);
    // A label no manager knows (what MCP's write_block writes): only the row's record ties it to the session.
    await store.blocks.setBlock(`scratch-${id}`, `scratch ${SECRET}`, { sessionId: id });
    await store.blocks.setBlock(`scratch-${kept.id}`, "kept scratch", { sessionId: kept.id });
  }
  if (hasStreamStore(store)) {
    await store.streams.start(id, "answer", Date.now());
    await store.streams.append(id, "answer", [{ seq: 0, chunk: `data: ${SECRET}` }], Date.now());
  }
  await instance.analyze?.();
  return id;
}

/** Registers the privacy contract's tests for `target` with the test runner's `{ describe, it }`. */
export function runPrivacyContract(api: TestApi, target: PrivacyTarget): void {
  const suite = suiteOf(api);
  suite.describe(`privacy contract: ${target.name}`, () => {
    for (const [path, erase] of PATHS) {
      suite.test(
        `${path} then purge: no trace of the session in the storage, the kept one whole`,
        async () => {
          const instance = await target.create();
          try {
            const manager = SessionManager.create(instance.store);
            const id = await seed(instance, manager);
            for (const text of [SECRET, NAME, OWNER]) {
              assert.ok((await instance.traces(text)) > 0, `the storage holds ${text} before the erasure`);
            }
            // Old enough for the sweep (the kept session is pinned).
            await new Promise((resolve) => setTimeout(resolve, 5));
            await erase(manager, id);
            const report = await (target.purge ?? ((store) => store.purge()))(instance.store);
            assert.equal(report.complete, true, JSON.stringify(report));
            const left: Record<string, number> = {};
            for (const text of [SECRET, NAME, OWNER]) left[text] = await instance.traces(text);
            assert.deepEqual(left, { [SECRET]: 0, [NAME]: 0, [OWNER]: 0 });
            const keptId = (await manager.list({ owner: "keeper" }))[0]!.id;
            assert.equal((await manager.getHistory(keptId)).length, 1);
            if (hasContextStorage(instance.store)) {
              assert.equal(await instance.store.blocks.getBlock(`scratch-${keptId}`), "kept scratch");
            }
          } finally {
            await instance.close();
          }
        },
      );
    }
  });
}
