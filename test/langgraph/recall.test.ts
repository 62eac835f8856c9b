// Recall's rules (src/langgraph/recall.ts, docs/LANGGRAPH.md "Recall") through the saver's put: a step appends only
// its new messages and reads nothing on a linear run, an edit under the same id updates the message, a removal is
// not reflected, a thread written without recall is filled in from the list on its next step, and only the named
// channel's LangChain messages are kept.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { type Checkpoint, emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { messageText } from "../../src/message/text.js";
import { SqliteStore } from "../../src/sqlite/store.js";

const dir = mkdtempSync(join(tmpdir(), "lg-recall-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const open = () => new SqliteStore(join(dir, `recall-${++n}.db`));
const meta = { source: "loop" as const, step: 0, parents: {} };

const human = (id: string, content: string) => new HumanMessage({ id, content });
const ai = (id: string, content: string) => new AIMessage({ id, content });

/** Puts a checkpoint whose `channel` holds `list` after the config's checkpoint; answers the new config. */
async function put(
  saver: AgentSessionSaver,
  config: RunnableConfig,
  list: unknown[],
  channel = "messages",
): Promise<RunnableConfig> {
  const checkpoint: Checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-1);
  const version = saver.getNextVersion(undefined);
  checkpoint.channel_values = { [channel]: list };
  checkpoint.channel_versions = { [channel]: version };
  return saver.put(config, checkpoint, meta, { [channel]: version });
}

const texts = async (store: SqliteStore, thread: string) =>
  (await store.session(thread).getHistory()).map((m) => `${m.id}:${messageText(m)}`);

test("a linear run appends each step's new messages and reads no checkpoint for it", async () => {
  const store = open();
  try {
    const saver = new AgentSessionSaver(store);
    const session = store.session("t-lin");
    let appends = 0;
    let reads = 0;
    const provider = store.session.bind(store);
    store.session = ((id: string) => {
      const p = provider(id);
      const append = p.appendMessage.bind(p);
      p.appendMessage = (...args) => {
        appends++;
        return append(...args);
      };
      return p;
    }) as typeof store.session;
    const get = store.checkpoints.get.bind(store.checkpoints);
    store.checkpoints.get = (...args) => {
      reads++;
      return get(...args);
    };
    let config: RunnableConfig = { configurable: { thread_id: "t-lin" } };
    const list: BaseMessage[] = [];
    for (let i = 0; i < 40; i++) {
      list.push(i % 2 ? ai(`m${i}`, `answer ${i}`) : human(`m${i}`, `question ${i}`));
      config = await put(saver, config, [...list]);
    }
    assert.equal(appends, 40, "one append per new message");
    assert.equal(reads, 0, "no checkpoint read to find what is new");
    const history = await session.getHistory();
    assert.deepEqual(
      history.map((m) => m.role),
      list.map((_, i) => (i % 2 ? "assistant" : "user")),
    );
    assert.deepEqual(history.at(-1)?.metadata, { langgraph: { type: "ai" } });
  } finally {
    await store.close();
  }
});

test("an edit under the same id updates the message; a removal is not reflected", async () => {
  const store = open();
  try {
    const saver = new AgentSessionSaver(store);
    let config: RunnableConfig = { configurable: { thread_id: "t-edit" } };
    config = await put(saver, config, [human("a", "first"), ai("b", "second"), human("c", "third")]);
    config = await put(saver, config, [human("a", "first"), ai("b", "second, edited"), human("c", "third")]);
    assert.deepEqual(await texts(store, "t-edit"), ["a:first", "b:second, edited", "c:third"]);
    // RemoveMessage("b") leaves [a, c]: the session keeps every message a checkpoint held.
    config = await put(saver, config, [human("a", "first"), human("c", "third")]);
    config = await put(saver, config, [human("a", "first"), human("c", "third"), ai("d", "fourth")]);
    assert.deepEqual(await texts(store, "t-edit"), ["a:first", "b:second, edited", "c:third", "d:fourth"]);
  } finally {
    await store.close();
  }
});

test("a thread written without recall is filled in on its next step, by a saver of another process", async () => {
  const path = join(dir, "later.db");
  const first = new SqliteStore(path);
  let config: RunnableConfig = { configurable: { thread_id: "t-late" } };
  try {
    const saver = new AgentSessionSaver(first, { messagesChannel: false });
    config = await put(saver, config, [human("a", "one")]);
    config = await put(saver, config, [human("a", "one"), ai("b", "two")]);
    assert.deepEqual(await texts(first, "t-late"), []);
  } finally {
    await first.close();
  }
  const second = new SqliteStore(path);
  try {
    const saver = new AgentSessionSaver(second);
    await put(saver, config, [human("a", "one"), ai("b", "two"), human("c", "three")]);
    assert.deepEqual(await texts(second, "t-late"), ["a:one", "b:two", "c:three"]);
  } finally {
    await second.close();
  }
});

test("only the named channel's LangChain messages are kept; other values are left alone", async () => {
  const store = open();
  try {
    const saver = new AgentSessionSaver(store, { messagesChannel: "chat" });
    let config: RunnableConfig = { configurable: { thread_id: "t-chat" } };
    config = await put(saver, config, [human("x", "in messages")]);
    assert.deepEqual(await texts(store, "t-chat"), []);
    config = await put(saver, config, ["a plain string", human("y", "in chat"), { role: "user" }], "chat");
    assert.deepEqual(await texts(store, "t-chat"), ["y:in chat"]);
    // A subgraph's namespace is not indexed (its messages reach the root's list when the app returns them).
    await put(
      saver,
      { configurable: { ...config.configurable, checkpoint_ns: "child:1" } },
      [human("z", "sub")],
      "chat",
    );
    assert.equal(await store.session("t-chat").getMessage("z"), null);
  } finally {
    await store.close();
  }
});

test("a message the store's policy refuses as too large is not recalled, said by a warning; the step goes on", async () => {
  const store = new SqliteStore(join(dir, `recall-${++n}.db`), { maxMessageBytes: 2_000 });
  const warnings: Error[] = [];
  const listen = (warning: Error) => {
    if (warning.name === "AgentSessionRecallWarning") warnings.push(warning);
  };
  process.on("warning", listen);
  try {
    const saver = new AgentSessionSaver(store);
    let config: RunnableConfig = { configurable: { thread_id: "t-big" } };
    const big = ai("big", "x".repeat(5_000));
    config = await put(saver, config, [human("a", "one")]);
    config = await put(saver, config, [human("a", "one"), big]);
    config = await put(saver, config, [human("a", "one"), big, human("c", "three")]);
    assert.deepEqual(await texts(store, "t-big"), ["a:one", "c:three"]);
    // Another process, from the checkpoint: the same history.
    const other = new AgentSessionSaver(store);
    await put(other, config, [human("a", "one"), big, human("c", "three"), ai("d", "four")]);
    assert.deepEqual(await texts(store, "t-big"), ["a:one", "c:three", "d:four"]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(
      warnings.length >= 1 && /"big" is not recalled/.test(warnings[0]?.message ?? ""),
      String(warnings),
    );
  } finally {
    process.off("warning", listen);
    await store.close();
  }
});
