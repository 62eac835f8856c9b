/**
 * The write × keyring matrix of the keyless contract (keyless.ts): a store holding alice's sealed message, block,
 * entry, summary, stream and facts, and every write, search and fact read a store without alice's key (no keyring,
 * a keyring without her key, a wrong key) might run on her session, each refused `DECRYPT_FAILED` with nothing
 * written in clear.
 * Writes of a capability the store lacks (streams, steps, transfer, context rows) are left out.
 */
import assert from "node:assert/strict";
import { hasCheckpoints } from "../../contract/checkpoints.js";
import { hasContextStorage } from "../../contract/context.js";
import { type Fact, hasFactStore, type NewFact } from "../../contract/facts.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { hasStepWrites, type StepWrite } from "../../contract/step.js";
import { hasStreamStore } from "../../contract/streams.js";
import { hasTransfer, type TransferItem, type TransferRow } from "../../contract/transfer.js";
import { SessionManager } from "../../manager/manager.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import { msg } from "../contract/harness.js";
import { seedCheckpoints, writeCheckpoints } from "./checkpoints.js";
import { itemValues, itemWrites, writeItems } from "./items.js";

/** What a refused write would have stored in clear: it must be in no byte of the store. */
export const CLEAR = "zqxwouldbeclearq";

/** Alice's secret, sealed by the keyed store. */
export const ALICE_SECRET = "zqxalicesealedq";

/** A keyring with a random key for each of `owners`. */
export function randomKeyring(owners: readonly string[]): Keyring {
  const keys = new Map(owners.map((owner) => [owner, crypto.getRandomValues(new Uint8Array(32))]));
  return { key: (owner) => keys.get(owner), forget: (owner) => void keys.delete(owner) };
}

/** The keyrings a store of alice's may be opened with that lack her key: none, without her key, a wrong key. */
export function keyless(): { name: string; keyring: Keyring | undefined }[] {
  return [
    { name: "no keyring", keyring: undefined },
    { name: "a keyring without her key", keyring: randomKeyring([]) },
    { name: "a wrong key", keyring: randomKeyring(["alice"]) },
  ];
}

/**
 * Alice (with a key) gets a session with a message, a summary, a block, an entry, a finished stream, a fact of
 * hers and one of her session, and LangGraph store items.
 */
export async function seedAlice(store: RegistryCapableStore): Promise<string> {
  const { id } = await SessionManager.create(store).create(`alice chat ${ALICE_SECRET}`, { owner: "alice" });
  const session = store.session(id);
  await session.appendMessage(msg("a0", `alice says ${ALICE_SECRET}`));
  await session.addCompaction(`summary ${ALICE_SECRET}`, "a0", "a0");
  if (hasContextStorage(store)) {
    await store.blocks.setBlock(`memory_${id}`, `block ${ALICE_SECRET}`);
    await store.entries.setEntry(`facts_${id}`, "k", `entry ${ALICE_SECRET}`);
  }
  if (hasStreamStore(store)) {
    await store.streams.start(id, "s1", Date.now());
    const chunk = `{"t":"${ALICE_SECRET}"}`;
    assert.equal(await store.streams.append(id, "s1", [{ seq: 0, chunk }], Date.now()), true);
    await store.streams.end(id, "s1", null, Date.now());
  }
  await seedCheckpoints(store, id, ALICE_SECRET);
  if (hasFactStore(store)) {
    await store.facts.add({ owner: "alice" }, [{ ...fact(id, `fact ${ALICE_SECRET}`), id: "f0" }]);
    await store.facts.add({ sessionId: id }, [{ ...fact(id, `fact ${ALICE_SECRET}`), id: "f0" }]);
  }
  await writeItems(store, "alice", `item ${ALICE_SECRET}`);
  return id;
}

type Write = [what: string, run: () => Promise<unknown>];

/** Every write of alice's content the store has, each writing `text`: refused without her key, sealed with it. */
export function writesOf(store: RegistryCapableStore, alice: string, text: string): Write[] {
  const session = store.session(alice);
  const writes: Write[] = [
    ["appendMessage", () => session.appendMessage(msg("n1", text))],
    ["updateMessage over a sealed row", () => session.updateMessage(msg("a0", text))],
    ["addCompaction", () => session.addCompaction(text, "a0", "a0")],
    // Her session's name, renamed and given to a new session of hers (sealed for her, as content is).
    ["a rename of her session", () => store.registry.rename(alice, text)],
    [
      "a new session of hers, named",
      () => store.registry.create({ id: `${alice}-named`, name: text, owner: "alice" }),
    ],
  ];
  const { upsertMessage, importMessage } = session;
  if (upsertMessage)
    writes.push(["upsertMessage over a sealed row", () => upsertMessage.call(session, msg("a0", text))]);
  if (importMessage)
    writes.push(["importMessage", () => importMessage.call(session, msg("i1", text), { parentId: null })]);
  writes.push(
    ...contextWrites(store, alice, text),
    ...factWrites(store, alice, text),
    ...otherWrites(store, alice, text),
    // Her store items (a read is refused as well: it opens what it returns).
    ...itemWrites(store, "alice", text),
  );
  return writes;
}

/** Every write of alice's content and every search of her, on `store` (without her key): each DECRYPT_FAILED. */
export async function assertRefused(
  store: RegistryCapableStore,
  alice: string,
  label: string,
): Promise<void> {
  const session = store.session(alice);
  const writes: Write[] = [
    ...writesOf(store, alice, CLEAR),
    ...factReads(store, alice),
    ["her search", () => store.searchMessages(ALICE_SECRET, { owner: "alice" })],
    ["a search of her sessions", () => store.searchMessages(ALICE_SECRET, { sessionIds: [alice] })],
  ];
  const { searchMessages } = session;
  if (searchMessages) writes.push(["her session's search", () => searchMessages.call(session, ALICE_SECRET)]);
  for (const [what, write] of writes) {
    await assert.rejects(write(), { code: "DECRYPT_FAILED" }, `${label}: ${what} is refused`);
  }
  // Her session's name reads as sealed, in a get and a listing, which are not refused for it.
  const row = await store.registry.get(alice);
  assert.deepEqual([row?.name, row?.nameSealed], ["", true], `${label}: her session's name is sealed`);
  const listed = (await store.registry.list()).find((info) => info.id === alice);
  assert.deepEqual([listed?.name, listed?.nameSealed], ["", true], `${label}: a listing shows it sealed`);
}

// Her block and entry, in place and through an import of rows.
function contextWrites(store: RegistryCapableStore, alice: string, text: string): Write[] {
  if (!hasContextStorage(store)) return [];
  const writes: Write[] = [
    ["setBlock over a sealed block", () => store.blocks.setBlock(`memory_${alice}`, text)],
    ["setEntry", () => store.entries.setEntry(`facts_${alice}`, "k2", text)],
  ];
  if (!hasTransfer(store)) return writes;
  const block: TransferRow = { kind: "block", key: `memory_${alice}`, content: text };
  const entry: TransferRow = { kind: "entry", label: `facts_${alice}`, key: "k3", content: text };
  return [
    ...writes,
    ["an import of her block", () => store.transfer.importRows(rows(block))],
    ["an import of her entry", () => store.transfer.importRows(rows(entry))],
  ];
}

// A fact of hers with `text`, sourced from her first message.
function fact(alice: string, text: string): NewFact {
  return {
    text,
    observedAt: 1,
    sources: [{ sessionId: alice, messageId: "a0" }],
    producer: "function:keyless",
  };
}

// Her facts, of her and of her session, added and imported: sealed with her key, refused without it.
function factWrites(store: RegistryCapableStore, alice: string, text: string): Write[] {
  if (!hasFactStore(store)) return [];
  const facts = store.facts;
  const imported = (scope: { owner: string | null; sessionId: string | null }): Fact => ({
    ...fact(alice, text),
    sources: [{ sessionId: alice, messageId: "a0" }],
    id: `imported-${scope.owner === null ? "s" : "o"}`,
    about: null,
    ...scope,
    status: "current",
    supersededBy: null,
    createdAt: 1,
  });
  return [
    ["a fact of hers", () => facts.add({ owner: "alice" }, [fact(alice, text)])],
    ["a fact of her session", () => facts.add({ sessionId: alice }, [fact(alice, text)])],
    ["an import of her fact", () => facts.importFacts([imported({ owner: "alice", sessionId: null })])],
    [
      "an import of her session's fact",
      () => facts.importFacts([imported({ owner: null, sessionId: alice })]),
    ],
  ];
}

// Every read of her facts: each refused without her key, even where it would find nothing.
function factReads(store: RegistryCapableStore, alice: string): Write[] {
  if (!hasFactStore(store)) return [];
  const facts = store.facts;
  const reads: Write[] = [];
  for (const [whose, scope] of [
    ["her", { owner: "alice" }],
    ["her session's", { sessionId: alice }],
  ] as const) {
    reads.push(
      [`a list of ${whose} facts`, () => facts.list(scope)],
      [`a get of ${whose} fact`, () => facts.get(scope, "f0")],
      [`a get of ${whose} fact that is not there`, () => facts.get(scope, "none")],
      [`a search of ${whose} facts`, () => facts.search(scope, ALICE_SECRET)],
      [`a search of ${whose} facts for a word not there`, () => facts.search(scope, "nothing")],
      [`an invalidation of ${whose} fact`, () => facts.invalidate(scope, "f0")],
    );
  }
  reads.push(["an export of the facts", () => facts.exportPage()]);
  return reads;
}

// A stream's chunk, an agent step's writes, an import of her session's rows.
function otherWrites(store: RegistryCapableStore, alice: string, text: string): Write[] {
  const writes: Write[] = [];
  if (hasStreamStore(store)) {
    // A stream started (that writes no content) and a chunk appended to it: the append is what is refused.
    writes.push([
      "a stream's append",
      async () => {
        const now = Date.now();
        await store.streams.start(alice, "s2", now);
        return store.streams.append(alice, "s2", [{ seq: 0, chunk: `{"t":"${text}"}` }], now);
      },
    ]);
  }
  if (hasStepWrites(store)) {
    const step = (write: Pick<StepWrite, "messages"> & Partial<StepWrite>) => () =>
      store.writeStep({ sessionId: alice, parentId: undefined, guard: false, ...write });
    writes.push(
      ["an agent step's append", step({ messages: [msg("st", text)] })],
      ["an agent step's rewrite", step({ messages: [], replace: [msg("a0", text)] })],
      ["an agent step's block", step({ messages: [], block: { key: `memory_${alice}`, content: text } })],
    );
  }
  if (hasCheckpoints(store))
    writes.push(["a LangGraph thread's checkpoint", () => writeCheckpoints(store, alice, text, "refused")]);
  if (hasTransfer(store))
    writes.push([
      "an import of her session's rows",
      () => store.transfer.importSession(withText(alice, text)),
    ]);
  return writes;
}

// Her session as a copy made elsewhere would bring it, with one message of `text`.
async function* withText(alice: string, text: string): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id: alice, info: null, leafId: "x9" } };
  const content = JSON.stringify(msg("x9", text));
  yield {
    kind: "message",
    message: { id: "x9", parentId: null, role: "user", createdAt: new Date().toISOString(), content },
  };
}

async function* rows(row: TransferRow): AsyncGenerator<TransferRow> {
  yield row;
}

/** What the keyed store reads of alice afterwards: her sealed rows only, none of the refused writes. */
export async function assertUntouched(store: RegistryCapableStore, alice: string): Promise<void> {
  const session = store.session(alice);
  const history = JSON.stringify(await session.getHistory());
  assert.ok(history.includes(ALICE_SECRET) && !history.includes(CLEAR), history);
  assert.equal((await session.getCompactions()).length, 1);
  assert.equal((await store.registry.get(alice))?.name, `alice chat ${ALICE_SECRET}`);
  const items = await itemValues(store, "alice");
  assert.ok(
    items.every((value) => value.includes(ALICE_SECRET) && !value.includes(CLEAR)),
    items.join(),
  );
  if (!hasContextStorage(store)) return;
  assert.equal(await store.blocks.getBlock(`memory_${alice}`), `block ${ALICE_SECRET}`);
  assert.equal(await store.entries.countEntries(`facts_${alice}`), 1);
  if (!hasFactStore(store)) return;
  for (const scope of [{ owner: "alice" }, { sessionId: alice }]) {
    const page = await store.facts.list(scope);
    assert.deepEqual(
      page.facts.map((f) => [f.id, f.text, f.status]),
      [["f0", `fact ${ALICE_SECRET}`, "current"]],
    );
    assert.deepEqual(
      (await store.facts.search(scope, ALICE_SECRET)).map((h) => h.fact.id),
      ["f0"],
    );
  }
}
