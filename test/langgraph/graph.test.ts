// A real StateGraph (MessagesAnnotation, a tool-calling chat model, a ToolNode, an interrupt) on AgentSessionSaver
// (docs/LANGGRAPH.md, "Recall"): two turns, the interrupt resumed through a second store on the same database (another
// process's), a fork from the checkpoint that ended the first turn; the thread's session then holds the conversation
// as a tree (the fork a branch), search and the model's session_search find the first turn, and eraseOwner + purge
// leave no byte of it on disk; with an encrypted owner no byte of it is ever in clear. SQLite, Postgres and PGlite.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import pg from "pg";
import { z } from "zod";
import type { SessionMessage } from "../../src/contract/message.js";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { messageText } from "../../src/message/text.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import type { Keyring } from "../../src/store/crypto/keyring.js";
import { dropSchema, PG_URL, pgliteSwitchedOff, postgresUnavailable } from "../fixtures/postgres-db.js";
import { occurrences, randomKeyring } from "../helpers/encryption.js";
import { markersInRelations, purgeUntilComplete, sqliteFiles, total } from "../helpers/purge.js";

// The first turn's words (the user's, the tool's), the second turn's, the fork's: one word each, as the index keeps terms.
const FIRST = "zqxflamingoq";
const TOOLWORD = "zqxlagoonq";
const SECOND = "zqxpelicanq";
const FORK = "zqxotterq";

/** A chat model that calls the weather tool when asked about the weather, and otherwise answers what it was told. */
class ScriptedModel extends BaseChatModel {
  _llmType(): string {
    return "scripted";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages[messages.length - 1] as BaseMessage;
    const said = typeof last.content === "string" ? last.content : "";
    const message =
      last.getType() === "tool"
        ? new AIMessage(`The report says: ${said}`)
        : said.includes("weather")
          ? new AIMessage({
              content: "",
              tool_calls: [{ id: "call-weather-1", name: "weather", args: { place: FIRST } }],
            })
          : new AIMessage(`You said: ${said}`);
    return { generations: [{ text: said, message }] };
  }
}

const weather = tool(
  async ({ place }: { place: string }) => `Sunny over the ${TOOLWORD} where the ${place} lives`,
  {
    name: "weather",
    description: "The weather at a place",
    schema: z.object({ place: z.string() }),
  },
);

/** The graph: agent → (a tool call) review, which interrupts → tools → agent; no tool call ends the turn. */
function graphOf(checkpointer: AgentSessionSaver) {
  const model = new ScriptedModel({});
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("review", async () => {
      const answer = interrupt("run the tool?");
      assert.equal(answer, "approved");
      return {};
    })
    .addNode("tools", new ToolNode([weather]))
    .addEdge(START, "agent")
    .addConditionalEdges(
      "agent",
      (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? "review" : END),
      ["review", END],
    )
    .addEdge("review", "tools")
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

type Store = SqliteStore | PostgresStore;

interface Target {
  /** A store on the same database: each call another process's. */
  open(keyring: Keyring | undefined): Promise<Store>;
  /** Occurrences of `word` on disk (SQLite: the file and its WAL; Postgres: pages of the schema's relations). */
  onDisk(word: string): Promise<number>;
  end(): Promise<void>;
}

const texts = (messages: readonly SessionMessage[]) => messages.map((m) => `${m.role}:${messageText(m)}`);

async function scenario(target: Target, keyring: Keyring | undefined): Promise<void> {
  const config = { configurable: { thread_id: "t-graph", user_id: "alice" } };
  const a = await target.open(keyring);
  const graphA = graphOf(new AgentSessionSaver(a, { ownerKey: "user_id" }));
  // Turn 1 stops at the interrupt, before the tool runs.
  await graphA.invoke(
    { messages: [new HumanMessage(`What is the weather where the ${FIRST} lives?`)] },
    config,
  );
  assert.deepEqual((await graphA.getState(config)).next, ["review"]);

  // Another process (a second store on the same database) resumes it.
  const b = await target.open(keyring);
  const graphB = graphOf(new AgentSessionSaver(b, { ownerKey: "user_id" }));
  const resumed = await graphB.invoke(new Command({ resume: "approved" }), config);
  assert.match(String(resumed.messages.at(-1)?.content), new RegExp(TOOLWORD));
  await b.close();

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

  // Sealed: no word of the conversation in clear; clear: it is there, so the scans below mean something.
  for (const word of [FIRST, TOOLWORD, SECOND, FORK]) {
    const found = await target.onDisk(word);
    if (keyring) assert.equal(found, 0, `${word} in clear on disk`);
    else assert.ok(found > 0, `${word} should be on disk before the erasure`);
  }

  const receipt = await manager.eraseOwner("alice");
  assert.equal(receipt.sessions, 1);
  assert.deepEqual(await a.searchMessages(FIRST), []);
  assert.equal((await purgeUntilComplete(() => a.purge())).complete, true);
  await a.close();
  for (const word of [FIRST, TOOLWORD, SECOND, FORK])
    assert.equal(await target.onDisk(word), 0, `${word} on disk after eraseOwner + purge`);
}

const dir = mkdtempSync(join(tmpdir(), "lg-graph-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function sqliteTarget(): Target {
  const path = join(dir, `graph-${++files}.db`);
  return {
    open: async (keyring) => new SqliteStore(path, keyring ? { keyring } : {}),
    onDisk: async (word) => occurrences(sqliteFiles(path), word),
    end: async () => undefined,
  };
}

async function postgresTarget(): Promise<Target> {
  const schema = `lg_graph_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const pools: pg.Pool[] = [];
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  return {
    // Each store its own pool: another process's connections.
    open: async (keyring) => {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
      pools.push(pool);
      return PostgresStore.open(pool, { schema, ...(keyring ? { keyring } : {}) });
    },
    onDisk: async (word) => total(await markersInRelations(admin, schema, word)),
    end: async () => {
      await dropSchema(admin, schema);
      await Promise.all([...pools, admin].map((p) => p.end()));
    },
  };
}

// PGlite is one process: the "other process" is a second store over the same database handle.
async function pgliteTarget(): Promise<Target> {
  const db = await PGlite.create({ extensions: { pageinspect } });
  return {
    open: async (keyring) => PostgresStore.open(db, { schema: "lg_graph", ...(keyring ? { keyring } : {}) }),
    onDisk: async (word) => total(await markersInRelations(db, "lg_graph", word)),
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
