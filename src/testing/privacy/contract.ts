/**
 * The privacy contract (docs/PRIVACY.md): for every erasure path (`erase`, `eraseOwner`, `eraseAll`, `sweep`, the
 * CLI's `prune`, `delete`), an
 * owner's session written in every place a session's data goes (its name, messages, an overlay, a cached prompt, a
 * streamed answer, its messages' vectors), its statistics sampled, then erased that way and purged, leaves no byte of
 * it that the target's `traces` finds (a file's bytes, a relation's pages, the statistics), while another owner's
 * pinned session stays. The target says how to look at its store's storage: the suite cannot know where a backend
 * keeps its bytes. It opens its stores with the suite's embedder (embedder.ts), whose vectors of the session hold
 * {@link VECTOR_MARK} as bytes, so `traces` finds a vector as it finds a word; the CLI's `prune` erases, and its
 * `purge` purges, through a store on the same storage opened without it (`withoutEmbedder`), as the CLI opens one.
 * On the paths that erase the owner, the owner's LangGraph store items are written too (items.ts), and erased.
 */
import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import { hasFactStore } from "../../contract/facts.js";
import type { SessionMessage } from "../../contract/message.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { hasStreamStore } from "../../contract/streams.js";
import { SessionManager } from "../../manager/manager.js";
import type { VectorChannel } from "../../search/vectors/types.js";
import type { OwnerDataDeclaration, OwnerDataFeature } from "../../store/owner-data.js";
import type { PurgeCapableStore } from "../../store/purge.js";
import { eraseSelected, recordEraser, selectForSweep } from "../../store/retention.js";
import { suiteOf, type TestApi } from "../runner.js";
import { seedCheckpoints } from "./checkpoints.js";
import { privacyEmbedder, VECTOR_MARK } from "./embedder.js";
import { ITEM_MARK, itemValues, writeItems } from "./items.js";
import { deleteKeepsSummary, type RowCounts, tableReach } from "./tables.js";

/** A store of the suite (what every erasure path and the purge need). */
export type PrivacyStore = RegistryCapableStore & PurgeCapableStore;

/** A store of the suite and how to read what its storage holds. */
export interface PrivacyInstance {
  store: PrivacyStore;
  /**
   * Optional: a second store on the same storage opened as the CLI opens one, without the embedder (nor the change
   * log); the CLI's `prune` path erases and purges through it, and the suite closes it. Without it, through `store`.
   */
  withoutEmbedder?(): Promise<PrivacyStore>;
  /** How many places of the store's storage (file bytes, pages, statistics) hold `text`. */
  traces(text: string): Promise<number>;
  /** Samples statistics as the database would by itself (SQLite's ANALYZE, Postgres's autovacuum); optional. */
  analyze?(): Promise<void>;
  /**
   * Optional, with the target's `declaration`: how many rows each of `tables` holds, a table that does not exist
   * left out. The suite then checks, per declared table, that the seed made it (unless a feature the target leaves
   * off makes it: tables.ts) and that the erasure reached it.
   */
  rowCounts?: RowCounts;
  /** Closes the store and removes its storage. */
  close(): Promise<void>;
}

/** A backend under the privacy contract. */
export interface PrivacyTarget {
  name: string;
  /** A fresh, empty store, opened with `embedder` where the target has vectors (`features` holds "embedder"). */
  create(options: PrivacyStoreOptions): Promise<PrivacyInstance>;
  /**
   * The optional features its stores have on (src/store/owner-data.ts `madeBy`): a declared tied table made by a
   * feature not listed here may be missing after the seed; any other must be there.
   */
  features?: readonly OwnerDataFeature[];
  /** Purges until complete or gives up (a shared server's other transactions can hold a purge back); default once. */
  purge?(store: PurgeCapableStore): Promise<{ complete: boolean }>;
  /**
   * Optional: the backend's declaration of owner data (src/store/owner-data.ts). With it (and the instance's
   * `rowCounts`) every table it ties to a session, record, message or payload must get rows from the owner's
   * session and hold none of them after each erasure (tables.ts).
   */
  declaration?: OwnerDataDeclaration;
}

/** What the suite gives a target's `create`. */
export interface PrivacyStoreOptions {
  /** The suite's deterministic embedder (embedder.ts): the store's `embedder` option. */
  embedder: (texts: string[]) => Promise<number[][]>;
}

/** The words the suite writes, each a single term (search indexes keep terms whole). */
const SECRET = "zqxprivacysecretq";
const NAME = "zqxprivacynameq";
const OWNER = "zqxprivacyownerq";
/** The overlay's summary: what a change log keeps of a deleted session (not an erased one). */
const SUMMARY = "zqxprivacysummaryq";
/** Over 4 KB of words: a store that splits values at a few KB stores it across rows. */
const LONG = `${SECRET} `.repeat(300);
/** A PNG of 600 bytes as a data URL: over the size from which media is offloaded (message/media.ts). */
const IMAGE = `data:image/png;base64,${btoa(String.fromCharCode(...new Uint8Array(600).fill(7)))}`;

type Path = (manager: SessionManager, id: string) => Promise<unknown>;

// The paths that erase the owner, not only its sessions: they reach its data kept by owner (its store items).
const OWNER_WIDE = new Set(["eraseOwner", "eraseAll"]);

const PATHS: readonly [string, Path][] = [
  ["erase", (manager, id) => manager.erase(id)],
  ["eraseOwner", (manager) => manager.eraseOwner(OWNER)],
  ["eraseAll", (manager) => manager.forOwner(OWNER).eraseAll()],
  ["sweep", (manager) => manager.sweep({ maxAgeMs: 1 })],
  ["prune", prune],
  ["delete", (manager, id) => manager.delete(id)],
];

/**
 * What `agent-session prune` runs (cli/commands/prune.ts): the sweep's selection, each session erased by the
 * registry's erase with no manager, so no template's labels (cli/inspect/prune.ts cliEraser: by record).
 */
async function prune(manager: SessionManager): Promise<unknown> {
  const { registry } = manager.store;
  if (typeof registry.erase !== "function")
    throw new Error("the registry has no erase: the CLI cannot prune");
  const selection = await selectForSweep(registry, { maxAgeMs: 1 });
  return eraseSelected(selection, recordEraser(registry.erase.bind(registry)));
}

/** The store's vector channel, if it was opened with an embedder. */
const vectorsOf = (store: PrivacyStore) => (store as { vectors?: VectorChannel | undefined }).vectors;

/** The kept session, another owner's, pinned: written first, so the row counts it leaves are the baseline. */
async function seedKept(instance: PrivacyInstance, manager: SessionManager): Promise<string> {
  const kept = await manager.create("kept notes", { owner: "keeper" });
  await manager.append(kept.id, { id: "k", role: "user", parts: [{ type: "text", text: "kept words" }] });
  await manager.pin(kept.id);
  if (hasContextStorage(instance.store))
    await instance.store.blocks.setBlock(`scratch-${kept.id}`, "kept scratch", { sessionId: kept.id });
  if (hasFactStore(instance.store)) {
    const sources = [{ sessionId: kept.id, messageId: "k" }];
    const fact = { text: "kept fact", observedAt: 1, producer: "function:privacy", sources };
    await instance.store.facts.add({ sessionId: kept.id }, [fact]);
  }
  await seedCheckpoints(instance.store, kept.id, "kept words");
  await writeItems(instance.store, "keeper", "kept item");
  // Indexed and embedded now (a store that indexes lazily does it on a search), so the baseline holds those rows.
  await instance.store.searchMessages("kept");
  await vectorsOf(instance.store)?.backfill();
  return kept.id;
}

/**
 * Writes the owner's session in every place a session's data goes (`ownerWide`: and the owner's store items);
 * answers its id and whether items were written.
 */
async function seed(
  instance: PrivacyInstance,
  manager: SessionManager,
  ownerWide: boolean,
): Promise<{ id: string; items: boolean }> {
  const { store } = instance;
  const { id } = await manager.create(`${NAME} chat`, { owner: OWNER });
  for (let i = 0; i < 5; i++) {
    await manager.append(id, {
      id: `m${i}`,
      role: "user",
      parts: [{ type: "text", text: `${SECRET} ${i}` }],
    });
  }
  // A long message (continuation rows where a store splits large values) and an image (an offloaded payload).
  await manager.append(id, { id: "long", role: "user", parts: [{ type: "text", text: LONG }] });
  const image = { id: "img", role: "user", parts: [{ type: "file", mediaType: "image/png", url: IMAGE }] };
  await manager.append(id, image as unknown as SessionMessage);
  await manager.addCompaction(id, `summary ${SUMMARY}`, "m0", "m1");
  if (hasContextStorage(store)) {
    await store.blocks.setBlock(`_system_prompt_${id}`, `prompt ${SECRET}`);
    // A label no manager knows (what MCP's write_block writes): only the row's record ties it to the session.
    await store.blocks.setBlock(`scratch-${id}`, `scratch ${SECRET}`, { sessionId: id });
    await store.entries.setEntry(`notes-${id}`, "k", `entry ${SECRET}`, { sessionId: id });
  }
  if (hasFactStore(store)) {
    // A fact of the owner and one of the session, both learned from it, and the session's learn mark.
    const fact = { text: `fact ${SECRET}`, about: NAME, observedAt: 1, producer: "function:privacy" };
    const sources = [{ sessionId: id, messageId: "m0" }];
    await store.facts.add({ owner: OWNER }, [{ ...fact, sources }]);
    await store.facts.add({ sessionId: id }, [{ ...fact, sources }]);
    await store.facts.claim(id, "privacy", Date.now(), Date.now() + 60_000);
    await store.facts.advance(id, "privacy", 1, 0);
    await store.facts.search({ owner: OWNER }, SECRET);
  }
  // A LangGraph thread's checkpoints, channel values (a delta among them) and pending writes.
  await seedCheckpoints(store, id, SECRET);
  if (hasStreamStore(store)) {
    await store.streams.start(id, "answer", Date.now());
    await store.streams.append(id, "answer", [{ seq: 0, chunk: `data: ${SECRET}` }], Date.now());
  }
  // Searched once, as an app would: a store that indexes lazily (SQLite's FTS5) indexes what waits. Every message
  // embedded (the background work may not have run yet).
  await store.searchMessages(SECRET);
  await vectorsOf(store)?.backfill();
  if (hasContextStorage(store)) await store.entries.searchEntries(`notes-${id}`, SECRET);
  const items = ownerWide && (await writeItems(store, OWNER, `${SECRET} ${ITEM_MARK}`));
  if (items) assert.equal((await itemValues(store, OWNER)).length, 3, "the owner reads its items");
  await instance.analyze?.();
  return { id, items };
}

/**
 * Runs the erasure, then the purge until complete; the CLI's `prune` path both through the target's store opened
 * without the embedder (where it gives one), as the CLI's `prune` and `purge` commands run.
 */
async function eraseAndPurge(
  target: PrivacyTarget,
  instance: PrivacyInstance,
  path: string,
  manager: SessionManager,
  erase: (manager: SessionManager) => Promise<unknown>,
): Promise<void> {
  const bare = path === "prune" ? await instance.withoutEmbedder?.() : undefined;
  try {
    await erase(bare ? SessionManager.create(bare) : manager);
    const report = await (target.purge ?? ((s) => s.purge()))(bare ?? instance.store);
    assert.equal(report.complete, true, JSON.stringify(report));
  } finally {
    await bare?.close();
  }
}

/** Registers the privacy contract's tests for `target` with the test runner's `{ describe, it }`. */
export function runPrivacyContract(api: TestApi, target: PrivacyTarget): void {
  const suite = suiteOf(api);
  suite.describe(`privacy contract: ${target.name}`, () => {
    for (const [path, erase] of PATHS) {
      suite.test(
        `${path} then purge: no trace of the session in the storage, the kept one whole`,
        async () => {
          const features = target.features ?? [];
          const instance = await target.create({ embedder: privacyEmbedder(SECRET) });
          try {
            const vectors = vectorsOf(instance.store) !== undefined;
            assert.equal(
              vectors,
              features.includes("embedder"),
              "a store with vectors where features say so",
            );
            const manager = SessionManager.create(instance.store);
            await seedKept(instance, manager);
            const ownerWide = OWNER_WIDE.has(path);
            const reach = await tableReach(target.declaration, instance, features, ownerWide);
            const { id, items } = await seed(instance, manager, ownerWide);
            await reach?.seeded();
            // A delete leaves the change log's events until its retention prunes them (PRIVACY.md), the summary too.
            const kept = path === "delete" && deleteKeepsSummary(target.declaration);
            const all = [
              SECRET,
              NAME,
              OWNER,
              SUMMARY,
              ...(vectors ? [VECTOR_MARK] : []),
              ...(items ? [ITEM_MARK] : []),
            ];
            const words = all.filter((text) => !(kept && text === SUMMARY));
            for (const text of all) {
              assert.ok((await instance.traces(text)) > 0, `the storage holds ${text} before the erasure`);
            }
            // Old enough for the sweep (the kept session is pinned).
            await new Promise((resolve) => setTimeout(resolve, 5));
            await eraseAndPurge(target, instance, path, manager, (m) => erase(m, id));
            await reach?.erased(path === "delete");
            const left: Record<string, number> = {};
            for (const text of words) left[text] = await instance.traces(text);
            assert.deepEqual(left, Object.fromEntries(words.map((text) => [text, 0])));
            const keptId = (await manager.list({ owner: "keeper" }))[0]!.id;
            assert.equal((await manager.getHistory(keptId)).length, 1);
            if (hasContextStorage(instance.store)) {
              assert.equal(await instance.store.blocks.getBlock(`scratch-${keptId}`), "kept scratch");
            }
            if (items) {
              assert.deepEqual(await itemValues(instance.store, OWNER), [], "the owner's items are gone");
              assert.equal((await itemValues(instance.store, "keeper")).length, 3, "the kept owner's stay");
            }
          } finally {
            await instance.close();
          }
        },
      );
    }
  });
}
