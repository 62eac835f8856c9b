// The reference's status frames: Session.create(agent) on an object with a `sql` tag and `broadcast` sends
// `cf_agent_session` frames after every write and around a compaction, with the reference's shapes and order.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Session } from "../../src/index.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { msg } from "../../src/testing/contract/harness.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";
import { warningsOf } from "../helpers/warnings.js";

function agent() {
  const frames: Record<string, unknown>[] = [];
  const base = sqlTagAgent();
  return {
    frames,
    db: base.db,
    sql: base.sql,
    broadcast(message: string) {
      frames.push(JSON.parse(message) as Record<string, unknown>);
    },
  };
}

const summarise = async (messages: { id: string }[]) =>
  messages.length < 4
    ? null
    : { fromMessageId: messages[0]?.id ?? "", toMessageId: messages[1]?.id ?? "", summary: "short" };

test("one idle frame per append (also of a stored id), update, delete and clear; exact shape", async () => {
  const a = agent();
  const session = Session.create(a).compactAfter(1_000_000, { tokenCounter: () => 41.2 });
  await session.appendMessage(msg("m1"));
  await session.appendMessage(msg("m1")); // already stored: no write, still a frame (as the reference)
  await session.updateMessage(msg("m1", "edited"));
  await session.deleteMessages(["m1"]);
  await session.clearMessages();
  assert.equal(a.frames.length, 5);
  // The custom counter's estimate, normalised to a whole number; the threshold as configured.
  for (const frame of a.frames) {
    assert.deepEqual(frame, {
      type: "cf_agent_session",
      phase: "idle",
      tokenEstimate: 42,
      tokenThreshold: 1_000_000,
    });
    assert.deepEqual(Object.keys(frame), ["type", "phase", "tokenEstimate", "tokenThreshold"]);
  }
  await session.close();
  a.db.close();
});

test("upsertMessage sends one frame per write too; a negative counter result is 0", async () => {
  const a = agent();
  const session = Session.create(a).compactAfter(100, { tokenCounter: () => -3.5 });
  await session.upsertMessage(msg("m1"));
  await session.upsertMessage(msg("m1", "replaced"));
  assert.deepEqual(a.frames, [
    { type: "cf_agent_session", phase: "idle", tokenEstimate: 0, tokenThreshold: 100 },
    { type: "cf_agent_session", phase: "idle", tokenEstimate: 0, tokenThreshold: 100 },
  ]);
  await session.close();
  a.db.close();
});

test("tokenThreshold is null without compactAfter; a non-finite counter result is 0", async () => {
  const a = agent();
  const session = Session.create(a);
  await session.appendMessage(msg("m1"));
  assert.equal(a.frames[0]?.tokenThreshold, null);
  assert.ok((a.frames[0]?.tokenEstimate as number) > 0);
  const counted = agent();
  const nan = Session.create(counted).compactAfter(10, { tokenCounter: () => Number.NaN });
  await nan.appendMessage(msg("m1"));
  assert.deepEqual(counted.frames, [
    { type: "cf_agent_session", phase: "idle", tokenEstimate: 0, tokenThreshold: 10 },
  ]);
  await session.close();
  await nan.close();
  a.db.close();
  counted.db.close();
});

test("compaction: compacting (estimate = tokensBefore), then idle with compacted.tokensBefore", async () => {
  const a = agent();
  let count = 0;
  const session = Session.create(a)
    .onCompaction(summarise)
    .compactAfter(3, { tokenCounter: ({ messages }) => messages.length + ++count * 0 });
  for (let i = 0; i < 4; i++)
    await session.appendMessage(msg(`m${i}`, "a long enough text to be worth a summary"));
  const phases = a.frames.map((f) => `${f.phase}${f.compacted ? "+compacted" : ""}:${f.tokenEstimate}`);
  // Appends 1-3 are at or under the threshold; the 4th is over it: its idle frame, compacting, idle+compacted.
  assert.deepEqual(phases, ["idle:1", "idle:2", "idle:3", "idle:4", "compacting:4", "idle+compacted:3"]);
  assert.deepEqual(a.frames.at(-1), {
    type: "cf_agent_session",
    phase: "idle",
    tokenEstimate: 3,
    tokenThreshold: 3,
    compacted: { tokensBefore: 4 },
  });
  await session.close();
  a.db.close();
});

test("a null or refused result sends idle without compacted; a throwing summariser sends the error frame", async () => {
  const a = agent();
  const session = Session.create(a).onCompaction(async () => null);
  await session.appendMessage(msg("m1"));
  assert.equal(await session.compact(), null);
  assert.deepEqual(
    a.frames.slice(1).map((f) => [f.phase, "compacted" in f]),
    [
      ["compacting", false],
      ["idle", false],
    ],
  );
  // A result the Session refuses (its end is not on the path) stored nothing either: idle, no compacted.
  const refusing = agent();
  const offPath = Session.create(refusing).onCompaction(async () => ({
    fromMessageId: "m1",
    toMessageId: "elsewhere",
    summary: "short",
  }));
  await offPath.appendMessage(msg("m1"));
  await assert.rejects(offPath.compact(), { code: "COMPACTION_REFUSED" });
  assert.deepEqual(
    refusing.frames.slice(1).map((f) => [f.type, f.phase, "compacted" in f]),
    [
      ["cf_agent_session", "compacting", false],
      ["cf_agent_session", "idle", false],
    ],
  );
  await offPath.close();
  refusing.db.close();
  const failing = agent();
  const broken = Session.create(failing).onCompaction(async () => {
    throw new Error("model down");
  });
  await broken.appendMessage(msg("m1"));
  await assert.rejects(broken.compact(), /model down/);
  assert.deepEqual(failing.frames.slice(1), [
    {
      type: "cf_agent_session",
      phase: "compacting",
      tokenEstimate: failing.frames[0]?.tokenEstimate,
      tokenThreshold: null,
    },
    { type: "cf_agent_session_error", error: "model down" },
  ]);
  await session.close();
  await broken.close();
  a.db.close();
  failing.db.close();
});

test("a throwing broadcast never fails the write; stores and providers never broadcast", async () => {
  const db = sqlTagAgent();
  const throwing = {
    sql: db.sql,
    broadcast() {
      throw new Error("socket closed");
    },
  };
  const session = Session.create(throwing);
  const warnings = await warningsOf("AgentSessionBroadcastWarning", async () => {
    const result = await session.appendMessage(msg("m1"));
    assert.equal(result.inserted, true);
  });
  assert.ok(warnings.some((w) => /broadcast\(\) threw/.test(w.message)));
  const store = new SqliteStore(":memory:") as SqliteStore & { broadcast?: () => void };
  let called = false;
  store.broadcast = () => {
    called = true;
  };
  await Session.create(store).appendMessage(msg("x"));
  assert.equal(called, false, "a store is not an Agent: no frames");
  await session.close();
  await store.close();
  db.db.close();
});

test("internal_onMessagesChanged hears the session's writes; an auto-compacting append is `compact`", async () => {
  const a = agent();
  const events: string[] = [];
  const session = Session.create(a)
    .onCompaction(summarise)
    .compactAfter(3, { tokenCounter: ({ messages }) => messages.length })
    .internal_onMessagesChanged((e) => {
      events.push(e.type === "append" ? `append ${e.message.id} ${e.inserted}` : e.type);
    });
  for (let i = 0; i < 3; i++)
    await session.appendMessage(msg(`m${i}`, "a long enough text to be worth a summary"));
  await session.appendMessage(msg("m0"));
  await session.appendMessage(msg("m3", "a long enough text to be worth a summary")); // over the threshold
  await session.updateMessage(msg("m3", "edited"));
  await session.deleteMessages(["m3"]);
  await session.clearMessages();
  assert.deepEqual(events, [
    "append m0 true",
    "append m1 true",
    "append m2 true",
    "append m0 false",
    "compact",
    "update",
    "delete",
    "clear",
  ]);
  // The maintenance write: the hook hears it, no status frame is sent.
  await session.appendMessage(msg("r1"));
  const frames = a.frames.length;
  await session.internal_rewriteMessage(msg("r1", "smaller"));
  assert.equal(a.frames.length, frames);
  assert.equal(events.at(-1), "update");
  session.internal_onMessagesChanged(null);
  await session.deleteMessages(["r1"]);
  assert.equal(events.at(-1), "update");
  await session.close();
  a.db.close();
});

test("a throwing hook never fails the write: it is an AgentSessionHookWarning", async () => {
  const a = agent();
  const session = Session.create(a).internal_onMessagesChanged(() => {
    throw new Error("hook broke");
  });
  const warnings = await warningsOf("AgentSessionHookWarning", async () => {
    assert.equal((await session.appendMessage(msg("m1"))).inserted, true);
  });
  assert.deepEqual(
    warnings.map((w) => [w.message, (w.cause as Error).message]),
    [["hook broke", "hook broke"]],
  );
  assert.deepEqual(
    (await session.getHistory()).map((m) => m.id),
    ["m1"],
  );
  await session.close();
  a.db.close();
});

test("an echoed overlay (compaction_ id) sends no frame and no hook event: nothing was written", async () => {
  const a = agent();
  const events: string[] = [];
  const session = Session.create(a).internal_onMessagesChanged((e) => {
    events.push(e.type);
  });
  await session.appendMessage(msg("m1"));
  const frames = a.frames.length;
  const echo = msg("compaction_1", "a summary the client posted back", "assistant");
  assert.equal((await session.appendMessage(echo)).inserted, false);
  assert.deepEqual(await session.upsertMessage(echo), { inserted: false, updated: false, message: echo });
  assert.equal(a.frames.length, frames);
  assert.deepEqual(events, ["append"]);
  await session.close();
  a.db.close();
});
