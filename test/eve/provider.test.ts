// The eve door driven through eve's memory contract (the handlers eve calls, with the contexts eve builds:
// contexts.ts) on every backend: two turns in two eve sessions, the second recalling the first; a capture retried,
// also by a new provider (a restart), storing nothing twice; a compaction whose capture and the turn's completion
// overlap; the tools (remember, search, forget) answering text; another principal seeing nothing; what a cleared eve
// session left erased; then eraseOwner + purge leave no byte on disk, and an encrypted owner never leaves one in clear.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { MemoryProvider } from "eve/memory";
import { agentSessionMemory, eraseEveSession } from "../../src/eve/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { randomKeyring } from "../helpers/encryption.js";
import { purgeUntilComplete } from "../helpers/purge.js";
import {
  assistant,
  compactionCompleted,
  compactionRequested,
  EVE_SKIP,
  toolsContext,
  turnCompleted,
  turnStarted,
  user,
  type Who,
} from "./contexts.js";
import { backends, type Store, type Target } from "./targets.js";

const FIRST = "zqxevefirstturnq";
const SECOND = "zqxevesecondturnq";
const NOTE = "zqxeveremembernoteq";
const LATE = "zqxevecompactionq";

const alice = (eveSession: string): Who => ({ principal: "alice", eveSession });
const bob: Who = { principal: "bob", eveSession: "bob-1" };

type Tools = Record<string, { execute(input: unknown, context: unknown): Promise<unknown> }>;
async function toolsOf(provider: MemoryProvider, who: Who): Promise<Tools> {
  return (await provider.tools?.(toolsContext(who, "t-tools", 9))) as unknown as Tools;
}
const run = async (tools: Tools, name: string, input: unknown) =>
  String(await tools[name]?.execute(input, {}));

const contentOf = (result: unknown, id: string): string =>
  ((result as { messages: { id: string; content: string }[] } | null)?.messages ?? []).find(
    (m) => m.id === id,
  )?.content ?? "";

async function count(store: Store, sessionIds: readonly string[]): Promise<number> {
  let n = 0;
  for (const id of sessionIds) n += (await store.session(id).getHistory()).length;
  return n;
}

async function scenario(target: Target, keyed: boolean): Promise<void> {
  const keyring = keyed ? randomKeyring(["alice"]) : undefined;
  const store = await target.open(keyring);
  const manager = new SessionManager(store);
  const provider = agentSessionMemory({ manager });
  const capture = provider.capture ?? {};

  // Turn 1, eve session s1: nothing known yet; captured, then the capture retried, also by a restarted provider.
  const q1 = user(`My favourite word is ${FIRST}, remember the ${FIRST}`);
  const first = await provider.recall["turn.started"](turnStarted(alice("s1"), "t1", 1, [q1], []));
  assert.match(contentOf(first, "agent-session-facts"), /No facts are known/);
  assert.match(contentOf(first, "agent-session-recall"), /No earlier message matches/);
  const done1 = turnCompleted(alice("s1"), "t1", 1, [q1], [q1, assistant(`Noted: ${FIRST}.`)]);
  await capture["turn.completed"]?.(done1);
  await capture["turn.completed"]?.(done1);
  await agentSessionMemory({ manager }).capture?.["turn.completed"]?.(done1);
  const sessions = (await manager.forOwner("alice").list()).map((s) => s.id);
  assert.equal(sessions.length, 1);
  assert.equal(await count(store, sessions), 2, "a retried capture stores nothing twice");

  // Turn 2, another eve session s2: the first turn is recalled.
  const q2 = user(`What was my favourite word? Was it ${FIRST}? Also ${SECOND}`);
  const second = await provider.recall["turn.started"](turnStarted(alice("s2"), "t2", 1, [q2], []));
  assert.match(contentOf(second, "agent-session-recall"), new RegExp(`user.*My favourite word is ${FIRST}`));
  // A replay of the same operation answers the same (eve refuses a different result).
  assert.deepEqual(
    await provider.recall["turn.started"](turnStarted(alice("s2"), "t2", 1, [q2], [])),
    second,
  );
  // Bob's memory holds nothing of alice's.
  const bobs = await provider.recall["turn.started"](
    turnStarted(bob, "b1", 1, [user(`Is it ${FIRST}?`)], []),
  );
  assert.doesNotMatch(JSON.stringify(bobs), new RegExp(FIRST));

  // A compaction in the middle of turn 2: its capture stores the turn so far, the completion only what came after.
  const partial = [q2, assistant(`Thinking about ${SECOND}`)];
  await capture["compaction.requested"]?.(compactionRequested(alice("s2"), "t2", 1, [q2], partial));
  const afterCompaction = await provider.recall["compaction.completed"]?.(
    compactionCompleted(alice("s2"), "t2", 1, [q2], [user("Summary of the conversation so far.")]),
  );
  assert.match(contentOf(afterCompaction, "agent-session-recall"), new RegExp(FIRST));
  const settled = [
    user("Summary of the conversation so far."),
    ...partial,
    assistant(`It was ${FIRST}; ${LATE}`),
  ];
  await capture["turn.completed"]?.(turnCompleted(alice("s2"), "t2", 1, [q2], settled));
  await capture["turn.completed"]?.(turnCompleted(alice("s2"), "t2", 1, [q2], settled));
  const both = (await manager.forOwner("alice").list()).map((s) => s.id);
  assert.equal(both.length, 2);
  // s1: 2; s2: the summary eve wrote, the question, two answers (each once).
  assert.equal(await count(store, both), 6);

  // Tools: remember a fact, find it, see it recalled, forget it; bad input answers an Error string.
  const tools = await toolsOf(provider, alice("s2"));
  assert.deepEqual(Object.keys(tools).sort(), ["forget", "remember", "search"]);
  assert.match(
    await run(tools, "remember", { text: `The user's pet is called ${NOTE}` }),
    /^Remembered as fact /,
  );
  assert.match(
    await run(tools, "remember", { text: `The user's pet is called  ${NOTE} ` }),
    /^Already remembered/,
  );
  const third = await provider.recall["turn.started"](
    turnStarted(alice("s3"), "t3", 1, [user("Hello again")], []),
  );
  assert.match(contentOf(third, "agent-session-facts"), new RegExp(NOTE));
  const found = await run(tools, "search", { query: NOTE });
  const factId = /fact (\S+):/.exec(found)?.[1];
  assert.ok(factId, found);
  assert.match(await run(tools, "forget", { id: factId }), /^Forgot fact/);
  assert.match(await run(tools, "forget", { id: factId }), /^Error: /);
  assert.match(
    await run(tools, "search", { query: NOTE }),
    /No memory matches/,
    "the note goes with its fact",
  );
  assert.match(await run(tools, "forget", { id: "elsewhere/m1" }), /^Error: /);
  assert.match(await run(tools, "remember", { text: "   " }), /^Error: /);
  assert.match(await run(tools, "remember", { text: "x".repeat(5_000) }), /^Error: /);
  const late = await run(tools, "search", { query: LATE });
  const messageRef = /message (\S+) \(assistant/.exec(late)?.[1];
  assert.ok(messageRef, late);
  assert.match(await run(tools, "forget", { id: messageRef }), /^Forgot message/);
  assert.match(await run(tools, "search", { query: LATE }), /No memory matches/);
  // Bob's tools cannot reach alice's message.
  assert.match(await run(await toolsOf(provider, bob), "forget", { id: `${both[0]}/x` }), /^Error: /);
  // Output is bounded.
  const small = agentSessionMemory({ manager, toolOutputChars: 500 });
  assert.ok(
    (await run(await toolsOf(small, alice("s2")), "search", { query: `${FIRST} ${SECOND}` })).length <= 500,
  );

  // On disk before the erasure: in clear without a key, never with one.
  for (const word of [FIRST, SECOND]) {
    const n = await target.onDisk(word);
    if (keyed) assert.equal(n, 0, `${word} in clear on disk`);
    else assert.ok(n > 0, `${word} should be on disk before the erasure`);
  }

  // eve's clear() leaves the store as it is: eraseEveSession erases what eve session s1 left.
  const cleared = await eraseEveSession(manager, "alice", "s1");
  assert.equal(cleared.sessionIds.length, 1);
  const fourth = await provider.recall["turn.started"](
    turnStarted(alice("s4"), "t4", 1, [user(`Is it ${FIRST}?`)], []),
  );
  assert.doesNotMatch(contentOf(fourth, "agent-session-recall"), new RegExp(`favourite word is ${FIRST}`));

  // Erasure of the owner and purge: no byte of alice's memory on disk.
  await manager.eraseOwner("alice");
  assert.equal((await purgeUntilComplete(() => store.purge())).complete, true);
  await store.close();
  for (const word of [FIRST, SECOND, NOTE, LATE])
    assert.equal(await target.onDisk(word), 0, `${word} on disk after eraseOwner + purge`);
}

for (const backend of await backends()) {
  const reason = EVE_SKIP || ((await backend.skip()) ?? false);
  describe(`eve memory provider: ${backend.name}`, { skip: reason }, () => {
    for (const [label, keyed] of [
      ["an owner without a key", false],
      ["an encrypted owner", true],
    ] as const) {
      test(`${label}: recalled across turns, captured once, compacted, forgotten, erased`, async () => {
        const target = await backend.target();
        try {
          await scenario(target, keyed);
        } finally {
          await target.end();
        }
      });
    }
  });
}
