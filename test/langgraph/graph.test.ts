// A real StateGraph (MessagesAnnotation, a tool-calling chat model, a ToolNode, an interrupt: graph-app.ts) on
// AgentSessionSaver (docs/LANGGRAPH.md, "Recall"): two turns, the interrupt resumed by another process (a child
// process on SQLite's file; a second store over the same database on Postgres and PGlite), a fork from the
// checkpoint that ended the first turn. The thread's session then holds the conversation as a tree (the fork a
// branch), search, the model's session_search and facts learning find the first turn, and eraseOwner + purge leave no byte of it on
// disk; with an encrypted owner no byte of it is ever in clear. SQLite, Postgres and PGlite.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import pg from "pg";
import type { SessionMessage } from "../../src/contract/message.js";
import { learnFacts } from "../../src/facts/learn.js";
import type { ExtractInput } from "../../src/facts/types.js";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { messageText } from "../../src/message/text.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { ownDatabaseOnDemand } from "../fixtures/own-database.js";
import { newPGlite } from "../fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";
import { runFixture } from "../helpers/child.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { markersInRelations, purgeUntilComplete, residueOf, sqliteFiles, total } from "../helpers/purge.js";
import { FIRST, FORK, graphOf, resume, SECOND, THREAD, TOOLWORD } from "./graph-app.js";

type Store = SqliteStore | PostgresStore;

interface Target {
  /** A store on the same database: each call another process's. */
  open(keyring: Keyring | undefined): Promise<Store>;
  /** Occurrences of `word` on disk (SQLite: the file and its WAL; Postgres: pages of the schema's relations). */
  onDisk(word: string): Promise<number>;
  /** What holds `word` on Postgres (relations, tuples and their transactions, backends), for a failed scan. */
  residue?(word: string): Promise<string>;
  /** Resumes the interrupted thread in a child process (absent: through a second store in this one). */
  resumeElsewhere?(keyring: (Keyring & { keys: Map<string, Uint8Array> }) | undefined): Promise<string>;
  end(): Promise<void>;
}

const texts = (messages: readonly SessionMessage[]) => messages.map((m) => `${m.role}:${messageText(m)}`);

async function scenario(
  target: Target,
  keyring: (Keyring & { keys: Map<string, Uint8Array> }) | undefined,
): Promise<void> {
  const config = THREAD;
  const a = await target.open(keyring);
  const graphA = graphOf(new AgentSessionSaver(a, { ownerKey: "user_id" }));
  // Turn 1 stops at the interrupt, before the tool runs.
  await graphA.invoke(
    { messages: [new HumanMessage(`What is the weather where the ${FIRST} lives?`)] },
    config,
  );
  assert.deepEqual((await graphA.getState(config)).next, ["review"]);

  // Another process (a child process, or a second store on the same database) resumes it.
  let said: string;
  if (target.resumeElsewhere) said = await target.resumeElsewhere(keyring);
  else {
    const b = await target.open(keyring);
    said = await resume(new AgentSessionSaver(b, { ownerKey: "user_id" }));
    await b.close();
  }
  assert.match(said, new RegExp(TOOLWORD));

  // Turn 2 in the first process, then a fork from the checkpoint that ended turn 1.
  await graphA.invoke({ messages: [new HumanMessage(`And the ${SECOND}?`)] }, config);
  let endOfTurn1: string | undefined;
  for await (const state of graphA.getStateHistory(config)) {
    if (state.values.messages?.length === 4 && state.next.length === 0)
      endOfTurn1 = state.config.configurable?.checkpoint_id;
  }
  assert.ok(endOfTurn1, "the checkpoint that ended turn 1");
  const forked = await graphA.invoke(
    { messages: [new HumanMessage(`Tell me about the ${FORK} instead`)] },
    { configurable: { ...config.configurable, checkpoint_id: endOfTurn1 } },
  );

  // The session's history is the graph's conversation on the branch it continued, under the LangChain ids.
  const session = a.session("t-graph");
  const history = await session.getHistory();
  assert.deepEqual(
    history.map((m) => m.id),
    forked.messages.map((m: BaseMessage) => m.id),
  );
  assert.deepEqual(texts(history), [
    `user:What is the weather where the ${FIRST} lives?`,
    "assistant:",
    "tool:",
    `assistant:The report says: Sunny over the ${TOOLWORD} where the ${FIRST} lives`,
    `user:Tell me about the ${FORK} instead`,
    `assistant:You said: Tell me about the ${FORK} instead`,
  ]);
  assert.deepEqual(history[1]?.parts, [
    { type: "tool-weather", toolCallId: "call-weather-1", state: "input-available", input: { place: FIRST } },
  ]);
  assert.equal(history[2]?.parts[0]?.state, "output-available");
  // Turn 2 is a branch beside the fork, each message stored once.
  const branches = await session.getBranches(history[3]?.id as string);
  assert.deepEqual(
    branches.map((m) => messageText(m)),
    [`And the ${SECOND}?`, `Tell me about the ${FORK} instead`],
  );
  assert.equal(await session.getPathLength(), 6);

  // Ranked search and the model's session_search find the first turn.
  const hits = await a.searchMessages(FIRST, { owner: "alice" });
  assert.ok(
    hits.some((h) => h.sessionId === "t-graph" && h.role === "user"),
    JSON.stringify(hits),
  );
  const manager = new SessionManager(a);
  const output = String(await manager.forOwner("alice").tools().session_search?.execute({ query: FIRST }));
  assert.match(output, new RegExp(`\\[user\\] What is the weather where the ${FIRST} lives`));
  assert.equal(
    String(await manager.forOwner("bob").tools().session_search?.execute({ query: FIRST })).includes(FIRST),
    false,
  );

  // Facts are learned from the thread as from any session, naming the message they came from.
  const learned = await learnFacts(a, {
    sessionIds: ["t-graph"],
    extractor: async ({ messages }: ExtractInput) =>
      messages
        .filter((m) => m.role === "user")
        .map((m) => ({ text: `The user asked: ${m.text}`, about: "user", sources: [m.id] })),
  });
  assert.equal(learned.added, 3);
  const facts = await a.facts.search({ owner: "alice" }, FIRST);
  assert.deepEqual(
    facts.map((f) => f.fact.sources),
    [[{ sessionId: "t-graph", messageId: history[0]?.id }]],
  );

  // Sealed: no word of the conversation in clear; clear: it is there, so the scans below mean something.
  for (const word of [FIRST, TOOLWORD, SECOND, FORK]) {
    const found = await target.onDisk(word);
    if (keyring) assert.equal(found, 0, `${word} in clear on disk`);
    else assert.ok(found > 0, `${word} should be on disk before the erasure`);
  }

  const receipt = await manager.eraseOwner("alice");
  assert.equal(receipt.sessions, 1);
  assert.deepEqual(await a.searchMessages(FIRST), []);
  const report = await purgeUntilComplete(() => a.purge());
  assert.equal(report.complete, true);
  await a.close();
  for (const word of [FIRST, TOOLWORD, SECOND, FORK]) {
    if ((await target.onDisk(word)) === 0) continue;
    const found = (await target.residue?.(word)) ?? "";
    assert.fail(`${word} on disk after eraseOwner + purge: ${found} purge: ${JSON.stringify(report.steps)}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), "lg-graph-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function sqliteTarget(): Target {
  const path = join(dir, `graph-${++files}.db`);
  return {
    open: async (keyring) => new SqliteStore(path, keyring ? { keyring } : {}),
    onDisk: async (word) => occurrences(sqliteFiles(path), word),
    resumeElsewhere: (keyring) => {
      const key = keyring?.keys.get("alice");
      const app = fileURLToPath(new URL("./graph-app.ts", import.meta.url));
      return runFixture(app, [path, ...(key ? [Buffer.from(key).toString("hex")] : [])]);
    },
    end: async () => undefined,
  };
}

// The server's cases on a database of their own: other test files' transactions do not hold their purges back.
const ownUrl = ownDatabaseOnDemand("lg_graph");

async function postgresTarget(): Promise<Target> {
  const schema = `lg_graph_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const pools: pg.Pool[] = [];
  const url = await ownUrl();
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  return {
    // Each store its own pool: another process's connections.
    open: async (keyring) => {
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      pools.push(pool);
      return PostgresStore.open(pool, { schema, ...(keyring ? { keyring } : {}) });
    },
    onDisk: async (word) => total(await markersInRelations(admin, schema, word)),
    residue: (word) => residueOf(admin, schema, word),
    end: async () => {
      await dropSchema(admin, schema);
      await Promise.all([...pools, admin].map((p) => p.end()));
    },
  };
}

// PGlite is one process: the "other process" is a second store over the same database handle.
async function pgliteTarget(): Promise<Target> {
  const db = await newPGlite({ extensions: { pageinspect } });
  return {
    open: async (keyring) => PostgresStore.open(db, { schema: "lg_graph", ...(keyring ? { keyring } : {}) }),
    onDisk: async (word) => total(await markersInRelations(db, "lg_graph", word)),
    residue: (word) => residueOf(db, "lg_graph", word),
    end: () => db.close(),
  };
}

const backends: { name: string; skip?: () => Promise<string | null>; target: () => Promise<Target> }[] = [
  { name: "SQLite", target: async () => sqliteTarget() },
  { name: "Postgres", skip: postgresUnavailable, target: postgresTarget },
  { name: "PGlite", skip: async () => pgliteSwitchedOff(), target: pgliteTarget },
];

for (const backend of backends) {
  const reason = (await backend.skip?.()) ?? null;
  describe(`a StateGraph on AgentSessionSaver: ${backend.name}`, { skip: reason ?? false }, () => {
    for (const [label, keyring] of [
      ["an owner without a key", undefined],
      ["an encrypted owner", "keyed"],
    ] as const) {
      test(`${label}: two turns, an interrupt resumed elsewhere, a fork; recalled, then erased`, async () => {
        const target = await backend.target();
        try {
          await scenario(target, keyring ? randomKeyring(["alice"]) : undefined);
        } finally {
          await target.end();
        }
      });
    }
  });
}
