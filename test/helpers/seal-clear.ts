// What the tests of sealing an owner's clear history share (rekey(owner, { sealClear: true }), docs/PRIVACY.md
// "Sealing an owner's clear history"): alice's rows of every kind written in clear before she had a key, what they
// read back as, and the checks after sealing — everything reads and searches the same with the keyring, a store
// without it refuses her, a sealing stopped after one batch resumes, and a second run seals nothing.
import assert from "node:assert/strict";
import { hasCheckpoints, type StoredCheckpoint } from "../../src/contract/checkpoints.js";
import type { BlockStore, EntryStore } from "../../src/contract/context.js";
import type { FactCapableStore } from "../../src/contract/facts.js";
import type { FeedCapableStore } from "../../src/contract/feed.js";
import { hasGraphItems } from "../../src/contract/graph-items.js";
import { hasSessionRegistry } from "../../src/contract/registry.js";
import type { SessionStore } from "../../src/contract/store.js";
import type { StreamCapableStore } from "../../src/contract/streams.js";
import { SessionManager } from "../../src/manager/manager.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import type { RekeyOptions, RekeyReport } from "../../src/store/crypto/rekey-options.js";
import { fact } from "../../src/testing/contract/facts-harness.js";
import { msg } from "../../src/testing/contract/harness.js";

/** One word per kind of row, so a trace left names the kind. */
export const WORDS = {
  message: "zqxclearmsgq",
  summary: "zqxclearsumq",
  block: "zqxclearblkq",
  entry: "zqxclearentq",
  fact: "zqxclearfactq",
  chunk: "zqxclearchunkq",
  name: "zqxclearnameq",
  item: "zqxclearitemq",
  checkpoint: "zqxclearckptq",
};

const bytes = (text: string) => new TextEncoder().encode(text);
const textOf = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString("utf8"));

/**
 * Puts checkpoints of alice's session (a LangGraph thread's rows, sql/checkpoints/) holding `text`: each with its
 * metadata, a messages value growing by a message (stored as a delta of the one before where the store's cache
 * has it), a channel without a value, and a pending write.
 */
async function putCheckpoints(store: ClearStore, alice: string, ids: readonly string[], text: string) {
  if (!hasCheckpoints(store)) return;
  const messages: string[] = [];
  for (const id of ids) {
    messages.push(`{"content":"${text} ${id} ${"x".repeat(80)}"}`);
    const checkpoint: StoredCheckpoint = {
      sessionId: alice,
      ns: id === "c2" ? "inner" : "",
      id,
      parentId: null,
      type: "json",
      data: bytes(`{"id":"${id}","note":"${text} checkpoint"}`),
      metadataType: "json",
      metadata: bytes(`{"step":1,"note":"${text} metadata"}`),
      versions: { messages: `${id}.1`, empty: `${id}.2` },
    };
    await store.checkpoints.put(checkpoint, [
      { channel: "messages", version: `${id}.1`, type: "json", data: bytes(`[${messages.join(",")}]`) },
      { channel: "empty", version: `${id}.2`, type: "empty", data: null },
    ]);
    await store.checkpoints.putWrites(
      alice,
      checkpoint.ns,
      id,
      [
        {
          taskId: "t1",
          idx: 0,
          channel: "messages",
          type: "json",
          data: bytes(`"${text} write"`),
          taskPath: "",
        },
      ],
      false,
    );
  }
}

/** Alice's checkpoints as a read of her session answers them, bytes as text. */
async function checkpointsOf(store: ClearStore, alice: string): Promise<unknown[]> {
  if (!hasCheckpoints(store)) return [];
  return (await store.checkpoints.page({ sessionId: alice, limit: 100 })).map((c) => ({
    ...c,
    data: textOf(c.data),
    metadata: textOf(c.metadata),
    values: c.values.map((v) => ({ ...v, data: textOf(v.data) })),
    writes: c.writes.map((w) => ({ ...w, data: textOf(w.data) })),
  }));
}

/** Puts alice's LangGraph store items (sql/graph-store/) holding `text`, under `keys`. */
async function putItems(store: ClearStore, keys: readonly string[], text: string): Promise<void> {
  if (!hasGraphItems(store)) return;
  const item = (key: string) => ({
    owner: "alice",
    namespace: "alice.memories",
    key,
    value: JSON.stringify({ text: `${text} ${key}` }),
    fields: null,
    ttlMs: key === "k1" ? 3_600_000 : null,
  });
  await store.graphItems.write(keys.map(item), [], Date.now());
}

/** Alice's item values, as a read of her scope answers them. */
async function itemsOf(store: ClearStore): Promise<string[]> {
  if (!hasGraphItems(store)) return [];
  return (await store.graphItems.page({ owner: "alice", prefix: "" }, null, Date.now(), 100)).map(
    (i) => i.value,
  );
}

/** A store with every part the case writes, and a rotation. */
export type ClearStore = SessionStore &
  FactCapableStore &
  StreamCapableStore & {
    readonly blocks: BlockStore;
    readonly entries: EntryStore;
    rekey(owner: string, options?: RekeyOptions): Promise<RekeyReport>;
    purge(): Promise<unknown>;
    close(): Promise<void>;
  };

/** Alice's session id, and what her rows read back as. */
export interface Seeded {
  alice: string;
  bob: string;
  snapshot: unknown;
}

/** Writes alice's rows of every kind and bob's (in clear: the store has no key for either); answers the snapshot. */
export async function seedClear(store: ClearStore): Promise<Seeded> {
  const manager = SessionManager.create(store);
  const { id: alice } = await manager.create(`alice chat ${WORDS.name}`, { owner: "alice" });
  for (let i = 0; i < 7; i++) {
    await manager.append(alice, msg(`a${i}`, `alice says ${WORDS.message} number ${i}`));
  }
  await store.session(alice).addCompaction(`alice summary ${WORDS.summary}`, "a0", "a1");
  // A summary in clear that starts like sealed content is stored encoded: it is sealed too.
  await store.session(alice).addCompaction(`~sealed look-alike ${WORDS.summary}`, "a3", "a4");
  await store.blocks.setBlock(`memory_${alice}`, `alice likes ${WORDS.block}`);
  // Blocks and entries recorded as the owner's or her session's, and her memory-tool directory.
  await store.blocks.setBlock("profile", `recorded ${WORDS.block}`, { owner: "alice" });
  await store.blocks.setBlock("_memories_owner_alice", `directory ${WORDS.block}`);
  await store.entries.setEntry("notes", "k2", `recorded entry ${WORDS.entry}`, { sessionId: alice });
  await store.entries.setEntry(`facts_${alice}`, "k1", `alice entry ${WORDS.entry}`);
  await store.facts.add({ owner: "alice" }, [
    fact(`Alice owns a boat named ${WORDS.fact}`, [[alice, "a0"]], { id: "f1", about: "Alice" }),
  ]);
  await store.facts.add({ sessionId: alice }, [
    fact(`The session mentions ${WORDS.fact}`, [[alice, "a1"]], { id: "f2" }),
  ]);
  await store.streams.start(alice, "s1", 1);
  const chunks = [0, 1].map((seq) => ({ seq, chunk: `data: {"delta":"${WORDS.chunk} ${seq}"}\n\n` }));
  await store.streams.append(alice, "s1", [...chunks, { seq: 2, chunk: `~${WORDS.chunk} tilde` }], 2);
  await store.streams.end(alice, "s1", null, 3);
  await putItems(store, ["k0", "k1"], `alice remembers ${WORDS.item}`);
  await putCheckpoints(store, alice, ["c1", "c2", "c3"], `alice thread ${WORDS.checkpoint}`);
  const { id: bob } = await manager.create("bob chat", { owner: "bob" });
  await manager.append(bob, msg("b0", "bob plain words"));
  return { alice, bob, snapshot: await snapshot(store, alice) };
}

/** Everything alice's rows read back as, and what searches of them find. */
export async function snapshot(store: ClearStore, alice: string): Promise<unknown> {
  const provider = store.session(alice);
  return {
    history: (await provider.getHistory()).map((m) => JSON.stringify(m.parts)),
    compactions: (await provider.getCompactions()).map((c) => c.summary),
    blocks: [
      await store.blocks.getBlock(`memory_${alice}`),
      await store.blocks.getBlock("profile"),
      await store.blocks.getBlock("_memories_owner_alice"),
    ],
    entries: (await store.entries.searchEntries(`facts_${alice}`, WORDS.entry)).map((e) => e.content),
    recordedEntries: (await store.entries.searchEntries("notes", WORDS.entry)).map((e) => e.content),
    facts: (await store.facts.list({ owner: "alice" })).facts.map((f) => [f.id, f.text, f.about]),
    sessionFacts: (await store.facts.list({ sessionId: alice })).facts.map((f) => f.text),
    factHits: (await store.facts.search({ owner: "alice" }, WORDS.fact)).map((h) => h.fact.id).sort(),
    chunks: (await store.streams.read(alice, "s1", -1, 10))?.chunks,
    messageHits: (await store.searchMessages(WORDS.message, { owner: "alice" })).map((h) => h.id).sort(),
    phraseHits: (await store.searchMessages(`"number 3"`, { sessionId: alice })).length,
    name: hasSessionRegistry(store) ? (await store.registry.get(alice))?.name : "no registry",
    items: await itemsOf(store),
    checkpoints: await checkpointsOf(store, alice),
  };
}

/** Seals alice's clear rows in batches of 2, stopping after the first batch; answers the second run's report. */
export async function sealInterrupted(store: ClearStore, seeded: Seeded): Promise<RekeyReport> {
  const stop = new AbortController();
  await assert.rejects(
    store.rekey("alice", {
      sealClear: true,
      batchSize: 2,
      signal: stop.signal,
      onProgress: () => stop.abort(),
    }),
  );
  const halfway = await snapshot(store, seeded.alice);
  assert.deepEqual(halfway, seeded.snapshot, "halfway, reads and searches are the same");
  const report = await store.rekey("alice", { sealClear: true, batchSize: 2 });
  assert.equal(report.resumed, true, "the second run resumes at the cursor");
  return report;
}

/** A store without the keyring refuses alice's writes and searches now. */
export async function refusesAlice(keyless: ClearStore, alice: string): Promise<void> {
  await assert.rejects(keyless.session(alice).appendMessage(msg("x", "would be plaintext")), {
    code: "DECRYPT_FAILED",
  });
  await assert.rejects(keyless.searchMessages(WORDS.message, { owner: "alice" }), { code: "DECRYPT_FAILED" });
  await assert.rejects(keyless.facts.list({ owner: "alice" }), { code: "DECRYPT_FAILED" });
  await assert.rejects(keyless.blocks.getBlock(`memory_${alice}`), { code: "DECRYPT_FAILED" });
  if (hasGraphItems(keyless)) await assert.rejects(itemsOf(keyless), { code: "DECRYPT_FAILED" });
  if (hasCheckpoints(keyless)) {
    await assert.rejects(checkpointsOf(keyless, alice), { code: "DECRYPT_FAILED" });
  }
}

/**
 * Alice's clear history, then a message and a store item sealed under `oldKey` (recording it), then sealClear with
 * `newKey` current and `oldKey` previous: one run rotates her sealed rows and seals her clear ones, so `newKey` alone
 * reads all of them and searches them as before.
 */
export async function rotatesAndSeals(
  open: (keyring?: Keyring) => Promise<ClearStore>,
  keyring: (key: Uint8Array, previous?: Uint8Array[]) => Keyring,
  [oldKey, newKey]: [Uint8Array, Uint8Array],
): Promise<void> {
  const plain = await open();
  const { alice, snapshot: before } = await seedClear(plain).finally(() => plain.close());
  const first = await open(keyring(oldKey));
  try {
    await first.session(alice).appendMessage(msg("late", `sealed later ${WORDS.message}`));
    await putItems(first, ["k2"], `sealed later ${WORDS.item}`);
    await putCheckpoints(first, alice, ["c4"], `sealed later ${WORDS.checkpoint}`);
  } finally {
    await first.close();
  }
  const store = await open(keyring(newKey, [oldKey]));
  try {
    const report = await store.rekey("alice", { sealClear: true, batchSize: 3 });
    assert.deepEqual([report.total, report.resealed, report.resumed], [8, 8, false]);
  } finally {
    await store.close();
  }
  const alone = await open(keyring(newKey));
  try {
    const now = (await snapshot(alone, alice)) as Record<string, unknown> & { history: string[] };
    const was = before as Record<string, unknown> & { history: string[]; messageHits: string[] };
    assert.deepEqual(now.history, [
      ...was.history,
      JSON.stringify([{ type: "text", text: `sealed later ${WORDS.message}` }]),
    ]);
    assert.deepEqual(now.messageHits, [...was.messageHits, "late"].sort());
    const late = hasGraphItems(alone) ? [JSON.stringify({ text: `sealed later ${WORDS.item} k2` })] : [];
    assert.deepEqual(
      now.items,
      [...(was.items as string[]), ...late],
      "items, the one under the old key too",
    );
    for (const part of ["compactions", "blocks", "entries", "facts", "sessionFacts", "factHits", "chunks"]) {
      assert.deepEqual(now[part], was[part], part);
    }
    const checkpoints = now.checkpoints as { id: string }[];
    assert.deepEqual(
      checkpoints.filter((c) => c.id !== "c4"),
      was.checkpoints,
      "checkpoints, byte for byte",
    );
    if (hasCheckpoints(alone)) assert.equal(checkpoints[0]?.id, "c4", "the one under the old key too");
  } finally {
    await alone.close();
  }
  const old = await open(keyring(oldKey));
  try {
    if (hasCheckpoints(old)) {
      await assert.rejects(checkpointsOf(old, alice), { code: "DECRYPT_FAILED" }, "the old key is refused");
    }
  } finally {
    await old.close();
  }
}

/** The first `count` overlay summaries a feed delivers from the start of the change log (a reset: "reset"). */
export async function replayedSummaries(store: FeedCapableStore, count: number): Promise<string[]> {
  const found: string[] = [];
  const stop = store.subscribe(
    (event) => {
      if (event.type === "compaction") found.push(event.compaction.summary);
      if (event.type === "reset") found.push("reset");
    },
    { after: 0 },
  );
  const end = Date.now() + 10_000;
  while (found.length < count && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  stop();
  return found;
}
