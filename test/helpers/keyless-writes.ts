// What the refusal tests of an encrypted owner's writes share (test/privacy/*): a store holding alice's sealed
// message, block, entry, summary and stream, and every write and search a store without alice's key (no keyring,
// a keyring without her key, a wrong key) might run on her session, each refused DECRYPT_FAILED with nothing
// written in clear.
import assert from "node:assert/strict";
import type { ContextCapableStore } from "../../src/contract/context.js";
import type { RegistryCapableStore } from "../../src/contract/registry.js";
import type { StepCapableStore, StepWrite } from "../../src/contract/step.js";
import type { StreamCapableStore } from "../../src/contract/streams.js";
import type { TransferCapableStore, TransferItem, TransferRow } from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { msg } from "../../src/testing/contract/harness.js";
import { randomKeyring } from "./encryption.js";

/** A store with every kind of owner content. */
export type FullStore = ContextCapableStore &
  RegistryCapableStore &
  TransferCapableStore &
  StreamCapableStore;

/** What a refused write would have stored in clear: it must be in no byte of the store. */
export const CLEAR = "zqxwouldbeclearq";

/** Alice's secret, sealed by the keyed store. */
export const ALICE_SECRET = "zqxalicesealedq";

/** The keyrings a store of alice's may be opened with that lack her key: none, without her key, a wrong key. */
export const KEYLESS: { name: string; keyring: Keyring | undefined }[] = [
  { name: "no keyring", keyring: undefined },
  { name: "a keyring without her key", keyring: randomKeyring([]) },
  { name: "a wrong key", keyring: randomKeyring(["alice"]) },
];

/** Alice (with a key) gets a session with a message, a block, an entry, a summary and a finished stream. */
export async function seedAlice(store: FullStore): Promise<string> {
  const { id } = await SessionManager.create(store).create("alice chat", { owner: "alice" });
  const session = store.session(id);
  await session.appendMessage(msg("a0", `alice says ${ALICE_SECRET}`));
  await session.addCompaction(`summary ${ALICE_SECRET}`, "a0", "a0");
  await store.blocks.setBlock(`memory_${id}`, `block ${ALICE_SECRET}`);
  await store.entries.setEntry(`facts_${id}`, "k", `entry ${ALICE_SECRET}`);
  await store.streams.start(id, "s1", Date.now());
  assert.equal(
    await store.streams.append(id, "s1", [{ seq: 0, chunk: `{"t":"${ALICE_SECRET}"}` }], Date.now()),
    true,
  );
  await store.streams.end(id, "s1", null, Date.now());
  return id;
}

/** Every write of alice's content and every search of her, on `store` (without her key): each DECRYPT_FAILED. */
export async function assertRefused(store: FullStore, alice: string, label: string): Promise<void> {
  const session = store.session(alice);
  const refused = { code: "DECRYPT_FAILED" };
  const now = Date.now();
  const step = (on: FullStore, write: Pick<StepWrite, "messages"> & Partial<StepWrite>) =>
    (on as unknown as StepCapableStore).writeStep({
      sessionId: alice,
      parentId: undefined,
      guard: false,
      ...write,
    });
  const writes: [string, () => Promise<unknown>][] = [
    ["appendMessage", () => session.appendMessage(msg("n1", CLEAR))],
    ["updateMessage over a sealed row", () => session.updateMessage(msg("a0", CLEAR))],
    ["upsertMessage over a sealed row", () => session.upsertMessage!(msg("a0", CLEAR))],
    ["importMessage", () => session.importMessage!(msg("i1", CLEAR), { parentId: null })],
    ["addCompaction", () => session.addCompaction(CLEAR, "a0", "a0")],
    ["setBlock over a sealed block", () => store.blocks.setBlock(`memory_${alice}`, CLEAR)],
    ["setEntry", () => store.entries.setEntry(`facts_${alice}`, "k2", CLEAR)],
    ["a stream's append", () => streamAppend(store, alice, now)],
    ["an agent step's append", () => step(store, { messages: [msg("st", CLEAR)] })],
    ["an agent step's rewrite", () => step(store, { messages: [], replace: [msg("a0", CLEAR)] })],
    [
      "an agent step's block",
      () => step(store, { messages: [], block: { key: `memory_${alice}`, content: CLEAR } }),
    ],
    ["an import of her session's rows", () => store.transfer.importSession(withClear(store, alice))],
    [
      "an import of her block",
      () => store.transfer.importRows(rows({ kind: "block", key: `memory_${alice}`, content: CLEAR })),
    ],
    [
      "an import of her entry",
      () =>
        store.transfer.importRows(
          rows({ kind: "entry", label: `facts_${alice}`, key: "k3", content: CLEAR }),
        ),
    ],
    ["her search", () => store.searchMessages(ALICE_SECRET, { owner: "alice" })],
    ["a search of her sessions", () => store.searchMessages(ALICE_SECRET, { sessionIds: [alice] })],
    ["her session's search", () => session.searchMessages!(ALICE_SECRET)],
  ];
  for (const [what, write] of writes) {
    await assert.rejects(write(), refused, `${label}: ${what} is refused`);
  }
}

// Her session as an export holds it (the store without her key cannot export it: read from the rows), plus one
// message in clear: what an import of a copy made elsewhere would bring.
async function* withClear(_store: FullStore, alice: string): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id: alice, info: null, leafId: "x9" } };
  const content = JSON.stringify(msg("x9", CLEAR));
  yield {
    kind: "message",
    message: { id: "x9", parentId: null, role: "user", createdAt: new Date().toISOString(), content },
  };
}

async function* rows(row: TransferRow): AsyncGenerator<TransferRow> {
  yield row;
}

// A stream started (that writes no content) and a chunk appended to it: the append is what is refused.
async function streamAppend(store: FullStore, alice: string, now: number): Promise<boolean> {
  await store.streams.start(alice, "s2", now);
  return store.streams.append(alice, "s2", [{ seq: 0, chunk: `{"t":"${CLEAR}"}` }], now);
}

/** What the keyed store reads of alice afterwards: her sealed rows only, none of the refused writes. */
export async function assertUntouched(store: FullStore, alice: string): Promise<void> {
  const session = store.session(alice);
  const history = JSON.stringify(await session.getHistory());
  assert.ok(history.includes(ALICE_SECRET) && !history.includes(CLEAR), history);
  assert.equal(await store.blocks.getBlock(`memory_${alice}`), `block ${ALICE_SECRET}`);
  assert.equal(await store.entries.countEntries(`facts_${alice}`), 1);
  assert.equal((await session.getCompactions()).length, 1);
  assert.equal((await store.registry.get(alice))?.name, "alice chat");
}
