/**
 * The key race of the keyless contract (keyless.ts; docs/PRIVACY.md, "Refusals"): a store without the owner's key
 * looks the owner up, finds no key, and writes a moment later; another store records the owner's first key in
 * between. Every sealed kind's write must then be refused `DECRYPT_FAILED` (its statement requires the owner to be
 * still without a recorded key, and the look-up done again refuses it), never land in clear; an import's rows (a
 * session's, blocks, entries), written in bulk with no guard of their own, hold the owner without a key instead
 * (sql/sealing/postgres-clear-owners.ts). The backend delays the write deterministically ({@link KeyRace}); each kind runs on a
 * fresh storage, so the recorded key is the first.
 */
import assert from "node:assert/strict";
import { hasCheckpoints } from "../../contract/checkpoints.js";
import { hasContextStorage } from "../../contract/context.js";
import { hasFactStore, type NewFact } from "../../contract/facts.js";
import { type GraphItemDraft, hasGraphItems } from "../../contract/graph-items.js";
import type { RegistryCapableStore } from "../../contract/registry.js";
import { hasStreamStore } from "../../contract/streams.js";
import { hasTransfer, type TransferItem, type TransferRow } from "../../contract/transfer.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import { msg } from "../contract/harness.js";
import type { Suite } from "../runner.js";
import { CLEAR, randomKeyring } from "./keyless-writes.js";

/** A store whose next write is delayed past another store's first key of an owner (see KeylessInstance.race). */
export interface KeyRace {
  /** The store without a keyring whose write is delayed. */
  store: RegistryCapableStore;
  /**
   * Arms the delay: the store's next write, once it looked the owner's key up, waits for the other store.
   * `afterLookUp`: the write's look-up comes after writes of its own in its transaction (an import's batch), so the
   * delay waits for the first write after it; a backend whose write transaction holds its lock from its start
   * (SQLite) may ignore it.
   */
  arm(afterLookUp?: boolean): void;
}

/** What the race needs of a storage (KeylessInstance's optional `race`, and its `traces`). */
export interface RaceInstance {
  race?(keyring: Keyring, owner: string): Promise<KeyRace>;
  traces(text: string): Promise<number>;
  close(): Promise<void>;
}

type RaceWrite = [
  kind: string,
  run: (store: RegistryCapableStore, id: string) => Promise<unknown>,
  afterLookUp?: boolean,
];

const OWNER = "alice";
const SESSION = "race-chat";

function fact(id: string): NewFact {
  return {
    text: `fact ${CLEAR}`,
    observedAt: 1,
    sources: [{ sessionId: id, messageId: "r0" }],
    producer: "function:race",
  };
}

const bytes = (text: string) => new TextEncoder().encode(JSON.stringify({ text }));

// A LangGraph thread's checkpoint of the session, with a channel value (checkpoints.ts writes a whole step).
function checkpoint(id: string) {
  return {
    sessionId: id,
    ns: "",
    id: "cp1",
    parentId: null,
    type: "json",
    data: bytes(`checkpoint ${CLEAR}`),
    metadataType: "json",
    metadata: bytes(`metadata ${CLEAR}`),
    versions: { messages: "1" },
  };
}

// A LangGraph store item of the owner (items.ts).
const item: GraphItemDraft = {
  owner: OWNER,
  namespace: `${OWNER}.memories`,
  key: "race",
  value: JSON.stringify({ text: `item ${CLEAR}` }),
  fields: null,
  ttlMs: null,
};

// Every sealed kind's write of the owner's content, as the store has them (stream, context rows, facts, a LangGraph
// thread's checkpoints and store items optional).
function raceWrites(store: RegistryCapableStore): RaceWrite[] {
  const writes: RaceWrite[] = [
    ["a message", (s, id) => s.session(id).appendMessage(msg("r1", CLEAR))],
    ["an overlay summary", (s, id) => s.session(id).addCompaction(`summary ${CLEAR}`, "r0", "r0")],
    ["a session's rename", (s, id) => s.registry.rename(id, `name ${CLEAR}`)],
    [
      "a named session registered for the owner",
      (s) => s.registry.create({ id: "race-new", name: `name ${CLEAR}`, owner: OWNER }),
    ],
  ];
  if (hasContextStorage(store)) {
    writes.push(
      ["a block of the session", (s, id) => blocksOf(s).setBlock(`memory_${id}`, `block ${CLEAR}`)],
      [
        "a block recorded for the session",
        (s, id) => blocksOf(s).setBlock("race-block", `block ${CLEAR}`, { sessionId: id }),
      ],
      [
        "a block recorded for the owner",
        (s) => blocksOf(s).setBlock("race-owned", `block ${CLEAR}`, { owner: OWNER }),
      ],
      ["an entry of the session", (s, id) => entriesOf(s).setEntry(`facts_${id}`, "k", `entry ${CLEAR}`)],
      [
        "an entry recorded for the owner",
        (s) => entriesOf(s).setEntry("race-label", "k", `entry ${CLEAR}`, { owner: OWNER }),
      ],
    );
  }
  if (hasStreamStore(store)) {
    writes.push([
      "a stream chunk",
      async (s, id) => {
        if (!hasStreamStore(s)) return;
        return s.streams.append(id, "s1", [{ seq: 0, chunk: `{"t":"${CLEAR}"}` }], Date.now());
      },
    ]);
  }
  if (hasTransfer(store)) {
    // An import writes its rows in bulk (an adoption through the same writer): its look-up and its rows in one
    // transaction, which the first key waits for or whose look-up sees it.
    const row = (r: TransferRow) => (s: RegistryCapableStore) => transferOf(s).importRows(one(r));
    writes.push(
      ["an import of the session's rows", (s, id) => transferOf(s).importSession(imported(id)), true],
      [
        "an import of a block of the session",
        row({ kind: "block", key: `memory_${SESSION}`, content: CLEAR }),
        true,
      ],
      [
        "an import of an entry",
        row({ kind: "entry", label: `facts_${SESSION}`, key: "k", content: CLEAR }),
        true,
      ],
    );
  }
  if (hasFactStore(store)) {
    writes.push(
      ["a fact of the owner", (s, id) => factsOf(s).add({ owner: OWNER }, [fact(id)])],
      ["a fact of the session", (s, id) => factsOf(s).add({ sessionId: id }, [fact(id)])],
    );
  }
  if (hasCheckpoints(store)) {
    writes.push(
      [
        "a LangGraph checkpoint of the session",
        (s, id) =>
          checkpointsOf(s).put(checkpoint(id), [
            { channel: "messages", version: "1", type: "json", data: bytes(`value ${CLEAR}`) },
          ]),
      ],
      [
        "a LangGraph pending write of the session",
        (s, id) =>
          checkpointsOf(s).putWrites(
            id,
            "",
            "cp1",
            [{ taskId: "t", idx: 0, channel: "messages", type: "json", data: bytes(CLEAR), taskPath: "" }],
            false,
          ),
      ],
    );
  }
  if (hasGraphItems(store)) {
    writes.push(["a LangGraph store item of the owner", (s) => itemsOf(s).write([item], [], Date.now())]);
  }
  return writes;
}

const checkpointsOf = (s: RegistryCapableStore) => (hasCheckpoints(s) ? s.checkpoints : unreachable());
const itemsOf = (s: RegistryCapableStore) => (hasGraphItems(s) ? s.graphItems : unreachable());
const transferOf = (s: RegistryCapableStore) => (hasTransfer(s) ? s.transfer : unreachable());
const blocksOf = (s: RegistryCapableStore) => (hasContextStorage(s) ? s.blocks : unreachable());
const entriesOf = (s: RegistryCapableStore) => (hasContextStorage(s) ? s.entries : unreachable());
const factsOf = (s: RegistryCapableStore) => (hasFactStore(s) ? s.facts : unreachable());
const unreachable = (): never => {
  throw new Error("the store lost a capability");
};

// The session's rows as a copy made elsewhere would bring them: a message and an overlay at it.
async function* imported(id: string): AsyncGenerator<TransferItem> {
  yield { kind: "session", session: { id, info: null, leafId: "x1" } };
  const content = JSON.stringify(msg("x1", CLEAR));
  const createdAt = new Date().toISOString();
  yield { kind: "message", message: { id: "x1", parentId: "r0", role: "user", createdAt, content } };
  yield {
    kind: "compaction",
    compaction: {
      id: "x-overlay",
      summary: `summary ${CLEAR}`,
      fromMessageId: "r0",
      toMessageId: "x1",
      createdAt,
    },
  };
}

async function* one(row: TransferRow): AsyncGenerator<TransferRow> {
  yield row;
}

// The owner's session as the keyless store leaves it before the race: registered, a message, a stream started (none
// of it sealed: the owner has no key yet).
async function seed(store: RegistryCapableStore): Promise<void> {
  await store.registry.create({ id: SESSION, name: "race", owner: OWNER });
  await store.session(SESSION).appendMessage(msg("r0", "before any key"));
  if (hasStreamStore(store)) await store.streams.start(SESSION, "s1", Date.now());
}

/**
 * Registers the race's tests: for each sealed kind, on a fresh storage of `create`, a write of the store without a
 * keyring delayed past another store's first key of the owner is refused `DECRYPT_FAILED`, and no byte of the
 * storage holds it. Skipped for a backend whose instance has no `race`.
 */
export function registerKeyRace(suite: Suite, create: () => Promise<RaceInstance>): void {
  suite.test(
    "a write delayed past another store's first key of its owner is refused, never in clear",
    async (t) => {
      const probe = await create();
      const racing = probe.race ? await probe.race(randomKeyring([OWNER]), OWNER) : undefined;
      const kinds = racing ? raceWrites(racing.store).length : 0;
      await racing?.store.close();
      await probe.close();
      if (!racing) {
        t.skip("the backend cannot delay a write (KeylessInstance.race)");
        return;
      }
      const failed: string[] = [];
      for (let i = 0; i < kinds; i++) {
        const instance = await create();
        try {
          const { store, arm } = await instance.race!(randomKeyring([OWNER]), OWNER);
          const [kind, write, afterLookUp] = raceWrites(store)[i]!;
          try {
            await seed(store);
            arm(afterLookUp);
            const refusal = await write(store, SESSION).then(
              () => "written",
              // Another refusal says why (a code alone hides a statement that failed).
              (error: { code?: string; message?: string }) =>
                error.code === "DECRYPT_FAILED" ? error.code : `${error.code}: ${error.message}`,
            );
            if (refusal !== "DECRYPT_FAILED") failed.push(`${kind}: ${refusal}`);
          } finally {
            await store.close();
          }
          const traces = await instance.traces(CLEAR);
          if (traces !== 0) failed.push(`${kind}: ${traces} traces in clear`);
        } finally {
          await instance.close();
        }
      }
      assert.deepEqual(failed, [], "every delayed write is refused DECRYPT_FAILED, nothing in clear");
    },
  );
}
