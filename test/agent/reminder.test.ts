import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSession, MemorySessionStorage } from "../../src/agent/index.js";
import { REMINDER_OPENING, REMINDER_PREAMBLE } from "../../src/context/reminder.js";
import { MemoryStore, Session, SessionError } from "../../src/index.js";
import { rejectsWithIssue } from "../helpers/session-error.js";
import { promptOf, scriptedModel } from "./helpers/mock-model.js";
import { stopOf, turn } from "./helpers/session.js";

/** A memory with a date block to remind; `fail` makes its provider throw once the prompt is frozen. */
function dateMemory() {
  const date = { value: "2026-09-28", fail: false };
  const memory = Session.create(new MemoryStore())
    .forSession("agent")
    .withContext("environment", {
      provider: {
        get: async () => {
          if (date.fail) throw new Error("calendar service down");
          return `Today is ${date.value}.`;
        },
      },
      whenChanged: "remind",
    })
    .withCachedPrompt();
  return { date, memory };
}

describe("agent session: context reminders from a Session", () => {
  it("ten turns: each call's latest user message carries the new date, the system prompt and storage do not", async () => {
    const date = { value: "2026-09-28" };
    const store = new MemoryStore();
    const memory = Session.create(store)
      .forSession("agent")
      .withContext("environment", {
        provider: { get: async () => `Today is ${date.value}.` },
        whenChanged: "remind",
      })
      .withCachedPrompt();
    const model = scriptedModel((i) => ({ text: `answer ${i}` }));
    const sessionStorage = new MemorySessionStorage();
    const session = await createSession({ model, memory, sessionStorage, systemPrompt: "You are helpful." });

    assert.equal(stopOf(await turn(session, "hello")).reason, "completed");
    const system = promptOf(model, 0)[0]!;
    assert.equal(system.role, "system");
    assert.match(system.text, /Today is 2026-09-28\./);
    assert.equal(promptOf(model, 0).at(-1)?.text, "hello");

    date.value = "2026-09-29";
    for (let n = 1; n <= 10; n++) {
      assert.equal(stopOf(await turn(session, `question ${n}`)).reason, "completed");
      const prompt = promptOf(model, n);
      assert.deepEqual(prompt[0], system, `turn ${n}: the system prompt is byte-identical`);
      const last = prompt.at(-1)!;
      assert.equal(last.role, "user");
      const [text, reminder] = last.text.split("|");
      assert.equal(text, `question ${n}`);
      assert.ok(reminder?.startsWith(REMINDER_OPENING), `turn ${n}: the reminder ends the user message`);
      assert.match(reminder!, /Today is 2026-09-29\.$/);
      assert.ok(
        prompt.slice(0, -1).every((m) => !m.text.includes(REMINDER_PREAMBLE)),
        "earlier messages go out as before",
      );
    }
    const stored = JSON.stringify([session.getMessages(), await sessionStorage.load(session.id)]);
    assert.ok(!stored.includes(REMINDER_PREAMBLE) && !stored.includes("2026-09-29"), "never stored");

    await memory.refreshSystemPrompt();
    await turn(session, "after the refresh");
    const after = promptOf(model, 11);
    assert.match(after[0]!.text, /Today is 2026-09-29\./);
    assert.equal(after.at(-1)?.text, "after the refresh");
    await session.close();
  });

  it("a memory whose reminder is not a function is refused", async () => {
    const memory = { freezeSystemPrompt: async () => "", tools: async () => ({}), reminder: "soon" };
    await rejectsWithIssue(createSession({ model: scriptedModel([]), memory: memory as never }), {
      code: "INVALID_ARGUMENT",
      path: "memory.reminder",
    });
  });
  it("a user who types a genuine reminder does not send one: the model's copy is redrawn, the genuine one follows", async () => {
    const { date, memory } = dateMemory();
    const model = scriptedModel((i) => ({ text: `answer ${i}` }));
    const session = await createSession({ model, memory, sessionStorage: new MemorySessionStorage() });
    await turn(session, "hello");
    date.value = "2026-09-29";
    const genuine = await memory.reminder();
    assert.ok(typeof genuine === "string");
    assert.ok(genuine.startsWith(REMINDER_OPENING));

    assert.equal(stopOf(await turn(session, genuine)).reason, "completed");
    const [typed, sent, ...rest] = promptOf(model, 1).at(-1)!.text.split("|");
    assert.deepEqual(rest, []);
    assert.equal(sent, genuine, "the genuine reminder goes out byte-identical, last");
    assert.notEqual(typed, genuine, "the typed copy is not byte-identical");
    assert.ok(!typed!.includes(REMINDER_OPENING) && !typed!.includes("═"));
    assert.match(typed!, /^CONTEXT REMINDER \(readonly\)$/m);
    assert.equal(
      JSON.stringify(session.getMessages()).includes(JSON.stringify(genuine)),
      true,
      "stored as typed",
    );

    await memory.refreshSystemPrompt();
    await turn(session, genuine);
    const [alone, ...none] = promptOf(model, 2).at(-1)!.text.split("|");
    assert.deepEqual(none, [], "no reminder pending: only the typed copy");
    assert.notEqual(alone, genuine);
    assert.ok(!alone!.includes(REMINDER_OPENING));
    await session.close();
  });

  it("a reminder that cannot be built does not fail the turn: an error event reports it, the turn answers", async () => {
    const { date, memory } = dateMemory();
    const model = scriptedModel((i) => ({ text: `answer ${i}` }));
    const session = await createSession({ model, memory, sessionStorage: new MemorySessionStorage() });
    await turn(session, "hello");
    date.fail = true;
    const events = await turn(session, "still there?");
    assert.equal(stopOf(events).reason, "completed");
    const errors = events.filter((e) => e.type === "error");
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /^Context reminder skipped: .*"environment".*calendar service down/);
    const error = errors[0]!.error;
    assert.ok(error instanceof SessionError && error.code === "STORAGE");
    assert.equal(promptOf(model, 1).at(-1)?.text, "still there?", "answered without a reminder");
    await session.close();
  });
});
