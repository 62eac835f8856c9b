import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AgentMessage,
  createSession,
  createSessionStorage,
  forkSession,
  getDefaultStorage,
  MemorySessionStorage,
  MISSING_RESULT_TEXT,
  resumeSession,
  type SessionState,
  type SessionStorage,
  setDefaultStorage,
  sumUsage,
} from "../../src/agent/index.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { promptOf, scriptedModel } from "./helpers/mock-model.js";
import { stopOf, turn } from "./helpers/session.js";

describe("agent session: resume and fork", () => {
  it("resumes with the full history and continues the turn count and ledger", async () => {
    const storage = new MemorySessionStorage();
    const first = await createSession({
      model: scriptedModel([{ text: "Noted: blue." }]),
      sessionStorage: storage,
    });
    await turn(first, "My favourite colour is blue.");
    await first.close();
    const model = scriptedModel([{ text: "Blue." }]);
    const again = await createSession({ model, sessionStorage: storage, resume: first.id });
    assert.equal(again.id, first.id);
    const stop = stopOf(await turn(again, "What is my favourite colour?"));
    assert.equal(stop.turn, 2);
    assert.equal(stop.totalUsage.steps, 2);
    assert.deepEqual(promptOf(model, 0), [
      { role: "user", text: "My favourite colour is blue." },
      { role: "assistant", text: "Noted: blue." },
      { role: "user", text: "What is my favourite colour?" },
    ]);
  });

  it("resuming an unknown id fails with Session not found: <id>", async () => {
    const storage = new MemorySessionStorage();
    for (const attempt of [
      createSession({ model: scriptedModel([]), sessionStorage: storage, resume: "missing-1" }),
      resumeSession("missing-1", { model: scriptedModel([]), sessionStorage: storage }),
      forkSession("missing-1", { model: scriptedModel([]), sessionStorage: storage }),
    ]) {
      await assert.rejects(attempt, { code: "NOT_FOUND" });
    }
  });

  it("a fork copies the messages, starts its usage at zero, records its parent and diverges alone", async () => {
    const storage = new MemorySessionStorage();
    const parent = await createSession({
      model: scriptedModel([{ text: "Paris.", usage: { input: 40 } }]),
      sessionStorage: storage,
      metadata: { project: "atlas" },
    });
    await turn(parent, "Capital of France?");
    const model = scriptedModel([{ text: "Berlin." }]);
    const fork = await forkSession(parent.id, { model, sessionStorage: storage, metadata: { branch: "b" } });
    assert.notEqual(fork.id, parent.id);
    assert.equal(fork.getUsage().totalTokens, 0);
    assert.deepEqual(fork.getUsage().entries, []);
    const state = (await storage.load(fork.id))!;
    assert.equal(state.parentId, parent.id);
    assert.deepEqual(
      { project: state.metadata.project, branch: state.metadata.branch },
      { project: "atlas", branch: "b" },
    );
    await turn(fork, "And of Germany?");
    assert.equal(fork.getUsage().steps, 1);
    assert.equal(fork.getMessages().length, 4);
    assert.equal((await storage.load(parent.id))?.messages.length, 2, "the parent is unchanged");
    assert.equal(promptOf(model, 0).length, 3);
  });

  it("a fork leaves its parent alone on a storage that hands out the object it keeps", async () => {
    // The simplest storage the interface allows: a Map of the saved objects themselves, no copies.
    const map = new Map<string, SessionState>();
    const storage: SessionStorage = {
      save: async (state) => void map.set(state.id, state),
      load: async (id) => map.get(id),
      delete: async (id) => void map.delete(id),
      list: async () => [...map.keys()],
    };
    const model = scriptedModel((i) => ({ text: `r${i}` }));
    const parent = await createSession({ model, sessionStorage: storage, sessionId: "parent" });
    await turn(parent, "p1");
    const fork = await createSession({ model, sessionStorage: storage, fork: "parent" });
    await turn(fork, "c1");
    await turn(fork, "c2");
    assert.equal(map.get("parent")?.messages.length, 2, "the stored parent is unchanged");
    assert.equal(map.get(fork.id)?.messages.length, 6);
    const resumed = await createSession({ model, sessionStorage: storage, resume: "parent" });
    await turn(resumed, "p2");
    assert.equal(map.get(fork.id)?.messages.length, 6, "the fork is unchanged by its parent's resume");
  });

  it("repairs tool calls left without results when the stored turn was still running", async () => {
    const storage = new MemorySessionStorage();
    const messages: AgentMessage[] = [
      { id: "u1", createdAt: 1, role: "user", content: "check both", metadata: { turn: 1 } },
      {
        id: "a1",
        createdAt: 2,
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "t1", toolName: "search", input: { q: "a" } },
          { type: "tool-call", toolCallId: "t2", toolName: "search", input: { q: "b" } },
        ],
        metadata: { turn: 1, step: 0, finishReason: "tool-calls" },
      },
      {
        id: "r1",
        createdAt: 3,
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "t1", toolName: "search", output: { type: "text", value: "A" } },
        ],
      },
    ];
    await storage.save({
      id: "half-done",
      messages,
      usage: { ...sumUsage([]), entries: [] },
      metadata: { "agent.turn": { number: 1, status: "running", startedAt: 1 } },
      createdAt: 1,
      updatedAt: 3,
    });
    const model = scriptedModel([{ text: "Continuing." }]);
    const session = await resumeSession("half-done", { model, sessionStorage: storage });
    const repaired = session.getMessages().slice(3);
    assert.equal(repaired.length, 2);
    assert.equal(repaired[0]?.role, "tool");
    assert.deepEqual(repaired[0]?.content, [
      {
        type: "tool-result",
        toolCallId: "t2",
        toolName: "search",
        output: { type: "error-text", value: MISSING_RESULT_TEXT },
      },
    ]);
    assert.equal(repaired[1]?.metadata?.synthetic, "interrupted");
    assert.equal(stopOf(await turn(session, "go on")).reason, "completed");
  });

  it("does not add a note when the final answer was stored and only the turn's end was lost", async () => {
    const storage = new MemorySessionStorage();
    await storage.save({
      id: "almost",
      messages: [
        { id: "u1", createdAt: 1, role: "user", content: "hi" },
        { id: "a1", createdAt: 2, role: "assistant", content: "hello", metadata: { finishReason: "stop" } },
      ],
      usage: { ...sumUsage([]), entries: [] },
      metadata: { "agent.turn": { number: 1, status: "running", startedAt: 1 } },
      createdAt: 1,
      updatedAt: 2,
    });
    const session = await resumeSession("almost", { model: scriptedModel([]), sessionStorage: storage });
    assert.equal(session.getMessages().length, 2);
  });

  it("setDefaultStorage and createSessionStorage pick where sessions live", async () => {
    const previous = getDefaultStorage();
    const storage = createSessionStorage("memory");
    setDefaultStorage(storage);
    try {
      const session = await createSession({ model: scriptedModel([{ text: "ok" }]) });
      await turn(session, "hi");
      assert.deepEqual(await storage.list(), [session.id]);
      const again = await resumeSession(session.id, { model: scriptedModel([]) });
      assert.equal(again.getMessages().length, 2);
    } finally {
      setDefaultStorage(previous);
    }
    assert.throws(() => createSessionStorage("postgres" as "memory", undefined), {
      code: "INVALID_ARGUMENT",
    });
    assert.throws(() => createSessionStorage("nosql" as "memory"), { code: "INVALID_ARGUMENT" });
    assert.throws(() => setDefaultStorage({} as never), { code: "INVALID_ARGUMENT" });
  });

  it("refuses contradictory or invalid options", async () => {
    const model = scriptedModel([]);
    const invalid = { code: "INVALID_ARGUMENT" } as const;
    await rejectsWithIssue(createSession({ model, resume: "a", fork: "b" }), {
      ...invalid,
      path: "fork",
      rule: "conflict",
    });
    await rejectsWithIssue(createSession({ model, maxTurns: 0 }), {
      ...invalid,
      path: "maxTurns",
      rule: "range",
    });
    await rejectsWithIssue(createSession({ model, pricing: { inputPerMillion: -1, outputPerMillion: 1 } }), {
      ...invalid,
      path: "pricing.inputPerMillion",
      rule: "range",
    });
    for (const [pricing, path, rule] of [
      [{}, "pricing.inputPerMillion", "required"],
      [{ inputPerMillion: 1 }, "pricing.outputPerMillion", "required"],
      [
        { inputPerMillion: 1, outputPerMillion: 2, cacheReadPerMilion: 0.1 },
        "pricing.cacheReadPerMilion",
        "unknown_key",
      ],
    ] as const) {
      await rejectsWithIssue(createSession({ model, pricing: pricing as never }), { ...invalid, path, rule });
    }
    const storage = new MemorySessionStorage();
    await createSession({ model, sessionStorage: storage, sessionId: "taken" });
    // They would be dropped silently: a resumed session keeps its own id and metadata.
    await rejectsWithIssue(
      createSession({ model, sessionStorage: storage, resume: "taken", sessionId: "x" }),
      {
        ...invalid,
        path: "sessionId",
        rule: "conflict",
      },
    );
    // @ts-expect-error metadata is not an option of resumeSession (JavaScript callers get the error below)
    await rejectsWithIssue(resumeSession("taken", { model, sessionStorage: storage, metadata: { a: 1 } }), {
      ...invalid,
      path: "metadata",
      rule: "conflict",
    });
    await assert.rejects(createSession({ model, sessionStorage: storage, sessionId: "taken" }), {
      code: "CONFLICT",
    });
  });
});
