import assert from "node:assert/strict";
import { test } from "node:test";
import { createSession, MemorySessionStorage } from "../../src/agent/index.js";
import { MemoryStore, Session } from "../../src/index.js";
import { SessionManager } from "../../src/manager/manager.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";

// One session-id rule (src/message/ids.ts assertSessionId): Session, SessionManager and the agent runtime accept and
// refuse the same ids. The one difference is "": the unnamed default session of a Session, which has no registry
// row and no agent (assertNamedSessionId).
const ACCEPTED = [
  "a",
  "tenant\uFFFD",
  "line\nbreak",
  "tab\there",
  "x".repeat(1000),
  "../not-a-path",
  "😀",
  " ",
];
// (`sessionId: undefined` or `null` in Session options means the default session, like leaving it out.)
const REFUSED: unknown[] = ["a\u0000b", "tenant\uD800", "tenant\uDC00", 42, {}, []];

type Outcome = "accepted" | "refused";

async function outcome(run: () => unknown): Promise<Outcome> {
  try {
    await run();
    return "accepted";
  } catch (error) {
    assert.equal((error as { code?: unknown }).code, "INVALID_ARGUMENT", String(error));
    return "refused";
  }
}

function entryPoints(id: unknown): Record<string, () => unknown> {
  const store = new MemoryStore();
  return {
    "Session.forSession": () => Session.create(store).forSession(id as string),
    "new Session({ sessionId })": () => new Session(store, { sessionId: id as string }),
    "SessionManager.getSession": () => new SessionManager(store).getSession(id as string),
    "SessionManager.create({ id })": () => new SessionManager(store).create("n", { id: id as string }),
    "agent createSession({ sessionId })": () =>
      createSession({
        model: scriptedModel([]),
        sessionStorage: new MemorySessionStorage(),
        sessionId: id as string,
      }),
    "agent storage.load": () => new MemorySessionStorage().load(id as string),
  };
}

for (const [expected, ids] of [
  ["accepted", ACCEPTED],
  ["refused", REFUSED],
] as const) {
  test(`every entry point ${expected === "accepted" ? "accepts" : "refuses"} the same ids`, async () => {
    for (const id of ids) {
      for (const [name, run] of Object.entries(entryPoints(id))) {
        assert.equal(await outcome(run), expected, `${name} with ${JSON.stringify(id)}`);
      }
    }
  });
}

test('"" is the default session of a Session only: the manager and the agent refuse it', async () => {
  const points = entryPoints("");
  for (const [name, run] of Object.entries(points)) {
    const expected =
      name === "Session.forSession" || name === "new Session({ sessionId })" ? "accepted" : "refused";
    assert.equal(await outcome(run), expected, name);
  }
});
