// agent-session/eve's refusals and switches: options refused with INVALID_ARGUMENT naming the option (eve's own
// fileMemory throws a TypeError for its one option; ours is the library's SessionError), no memory for a principal
// eve gives none (anonymous, runtime, none), an owner the app resolves, recall and capture switched off.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { agentSessionMemory } from "../../src/eve/index.js";
import type { AgentSessionMemoryOptions } from "../../src/eve/options.js";
import { SessionManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { assertSessionError, rejectsWithIssue } from "../helpers/session-error.js";
import { assistant, EVE_SKIP, toolsContext, turnCompleted, turnStarted, user, type Who } from "./contexts.js";

const dir = mkdtempSync(join(tmpdir(), "eve-options-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const manager = () => new SessionManager(new SqliteStore(join(dir, `m${++n}.db`)));
const make = (options: unknown) => () => agentSessionMemory(options as AgentSessionMemoryOptions);

describe("agentSessionMemory options", { skip: EVE_SKIP }, () => {
  test("refused with INVALID_ARGUMENT naming the option", () => {
    assertSessionError(make(undefined), { code: "INVALID_ARGUMENT", path: "", rule: "required" });
    assertSessionError(make(42), { code: "INVALID_ARGUMENT", path: "", rule: "type" });
    assertSessionError(make({}), { code: "INVALID_ARGUMENT", path: "manager" });
    assertSessionError(make({ manager: {} }), { code: "INVALID_ARGUMENT", path: "manager" });
    const m = manager();
    assertSessionError(make({ manager: m, recall: { limit: 21 } }), {
      code: "INVALID_ARGUMENT",
      path: "recall.limit",
      rule: "range",
    });
    assertSessionError(make({ manager: m, recall: { maxTokens: 1.5 } }), {
      code: "INVALID_ARGUMENT",
      path: "recall.maxTokens",
    });
    assertSessionError(make({ manager: m, recall: { across: "everyone" } }), {
      code: "INVALID_ARGUMENT",
      path: "recall.across",
      rule: "one_of",
    });
    assertSessionError(make({ manager: m, owner: "alice" }), { code: "INVALID_ARGUMENT", path: "owner" });
    assertSessionError(make({ manager: m, toolOutputChars: 10 }), {
      code: "INVALID_ARGUMENT",
      path: "toolOutputChars",
      rule: "range",
    });
    assertSessionError(make({ manager: m, capture: "yes" }), { code: "INVALID_ARGUMENT", path: "capture" });
    assertSessionError(make({ manager: m, limit: 3 }), {
      code: "INVALID_ARGUMENT",
      path: "limit",
      rule: "unknown_key",
    });
  });

  test("no memory for a principal eve gives none: no recall, no tools, nothing captured", async () => {
    const m = manager();
    const provider = agentSessionMemory({ manager: m });
    for (const who of [
      { principal: null, eveSession: "s" },
      { principal: "guest", principalType: "anonymous", eveSession: "s" },
      { principal: "cron", principalType: "runtime", eveSession: "s" },
    ] satisfies Who[]) {
      const q = user("hello there");
      assert.equal(await provider.recall["turn.started"](turnStarted(who, "t", 1, [q], [])), null);
      assert.equal(await provider.tools?.(toolsContext(who, "t", 1)), null);
      await provider.capture?.["turn.completed"]?.(turnCompleted(who, "t", 1, [q], [q, assistant("hi")]));
    }
    assert.deepEqual(await m.list(), []);
  });

  test("an owner the app resolves; an owner id that is none is refused", async () => {
    const m = manager();
    const provider = agentSessionMemory({
      manager: m,
      owner: ({ session }) => (session.auth.current ? `tenant-1:${session.auth.current.principalId}` : null),
    });
    const who = { principal: "alice", eveSession: "s" };
    const q = user("hello there");
    await provider.capture?.["turn.completed"]?.(turnCompleted(who, "t", 1, [q], [q, assistant("hi")]));
    assert.equal((await m.forOwner("tenant-1:alice").list()).length, 1);
    const bad = agentSessionMemory({ manager: m, owner: () => "" });
    await rejectsWithIssue(async () => bad.recall["turn.started"](turnStarted(who, "t", 1, [q], [])), {
      code: "INVALID_ARGUMENT",
      path: "owner",
    });
  });

  test("recall without facts or hits, and capture switched off", async () => {
    const m = manager();
    const quiet = agentSessionMemory({ manager: m, recall: { facts: false, limit: 0 }, capture: false });
    assert.equal(quiet.capture, undefined);
    const who = { principal: "alice", eveSession: "s" };
    assert.equal(await quiet.recall["turn.started"](turnStarted(who, "t", 1, [user("hello")], [])), null);
    const factsOnly = agentSessionMemory({ manager: m, recall: { limit: 0 } });
    const result = await factsOnly.recall["turn.started"](turnStarted(who, "t", 1, [user("hello")], []));
    assert.deepEqual(
      result?.messages.map((message) => message.id),
      ["agent-session-facts"],
    );
  });
});
