// A refused input says which field broke which rule as data (SessionError.issues), beside the message for humans.
import assert from "node:assert/strict";
import { test } from "node:test";
import { userModelMessageSchema } from "ai";
import { z } from "zod";
import { MemorySessionStorage } from "../src/agent/index.js";
import { toUserMessage } from "../src/agent/input.js";
import { assertStateMessages } from "../src/agent/storage/state-schema.js";
import { SessionError, type SessionIssueRule } from "../src/errors.js";
import { Session } from "../src/index.js";
import { SessionManager } from "../src/manager/manager.js";
import { createMcpServer } from "../src/mcp/index.js";
import { MemoryStore } from "../src/memory/store.js";
import { assertNamedSessionId } from "../src/message/ids.js";
import { toolNamesArg } from "../src/message/tool-parts.js";
import { PostgresStore } from "../src/postgres/index.js";
import { parseInput } from "../src/schema/parse.js";
import { checkedBy } from "../src/schema/rules.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { batchBounds } from "../src/store/history-stream.js";
import { assertTransferAttachment, assertTransferMessage } from "../src/store/transfer/schema.js";
import { assertTransferItem } from "../src/store/transfer/validate.js";
import { newPGlite } from "./fixtures/pglite.js";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";
import { assertSessionError, rejectsWithIssue } from "./helpers/session-error.js";

const at = new Date(0).toISOString();

test("a transfer record's field names its record in the message and its path in the issue", () => {
  const record = { id: "m2", parentId: "", role: "user", createdAt: at, content: "{}" };
  assert.throws(() => assertTransferMessage(record), {
    code: "INVALID_ARGUMENT",
    message:
      'The parent of message "m2" must be a non-empty, well-formed Unicode string without U+0000, got ""',
  });
  assertSessionError(() => assertTransferMessage(record), {
    code: "INVALID_ARGUMENT",
    path: "parentId",
    rule: "format",
  });
  assertSessionError(() => assertTransferMessage({ ...record, parentId: "p".repeat(2000) }), {
    code: "INVALID_ARGUMENT",
    path: "parentId",
    rule: "too_long",
  });
  assertSessionError(() => assertTransferAttachment({ hash: "a".repeat(64), bytes: 3 as never }), {
    code: "INVALID_ARGUMENT",
    path: "bytes",
    rule: "type",
  });
});

test("every issue of the input is listed, the one the message names first", () => {
  try {
    assertTransferMessage({ id: "m", parentId: null, role: "user", createdAt: "x", content: 3 as never });
    assert.fail("refused");
  } catch (error) {
    assert.deepEqual((error as { issues?: unknown }).issues, [
      { path: "createdAt", rule: "format" },
      { path: "content", rule: "type" },
    ]);
  }
});

test("a hand-written check inside a schema keeps its code and message and gains the field's issue", () => {
  const schema = z.object({
    id: checkedBy<string>((value) => {
      if (value !== "ok") throw new TypeError("not a SessionError");
    }),
  });
  assert.throws(() => parseInput(schema, { id: "no" }), /not a SessionError/);
  const kept = z.object({ inner: z.object({ key: checkedBy<string>(assertNamed) }) });
  assertSessionError(() => parseInput(kept, { inner: { key: "" } }), {
    code: "RESERVED_ID",
    path: "inner.key",
    rule: "format",
  });
  assert.throws(() => parseInput(kept, { inner: { key: "" } }), { message: "no name" });
});

test("a hand-written check inside a schema reports the rule its own error names, at the schema's path", () => {
  const schema = z.object({ id: checkedBy<string>(assertNamedSessionId) });
  assertSessionError(() => parseInput(schema, { id: "s".repeat(2000) }), {
    code: "INVALID_ARGUMENT",
    path: "id",
    rule: "too_long",
  });
  assertSessionError(() => parseInput(schema, { id: 7 }), {
    code: "INVALID_ARGUMENT",
    path: "id",
    rule: "type",
  });
  assertSessionError(() => parseInput(schema, { id: "" }), {
    code: "INVALID_ARGUMENT",
    path: "id",
    rule: "required",
  });
});

function assertNamed(value: unknown): asserts value is string {
  // A SessionError with a code other than the parse's default: the schema must not replace it.
  if (value === "") throw new SessionError("RESERVED_ID", "no name");
}

test("a value parsed alone is named by the caller; a missing field is required, a wrong one a type", async () => {
  assertSessionError(() => Session.create(new MemoryStore()).withMaxMessageBytes(10), {
    code: "INVALID_ARGUMENT",
    path: "maxMessageBytes",
    rule: "range",
  });
  const storage = new MemorySessionStorage();
  await rejectsWithIssue(storage.save({ id: "s", metadata: {} } as never), {
    code: "INVALID_ARGUMENT",
    path: "usage",
    rule: "required",
  });
  await rejectsWithIssue(storage.save({ id: "s", usage: { entries: [] }, metadata: [] } as never), {
    code: "INVALID_ARGUMENT",
    path: "metadata",
    rule: "type",
  });
});

test("an unknown option's issue is at the key itself, one issue per unknown key", () => {
  const schema = z.object({ pricing: z.strictObject({ inputPerMillion: z.number() }) });
  try {
    parseInput(schema, { pricing: { inputPerMillion: 1, foo: 2, bar: 3 } });
    assert.fail("refused");
  } catch (error) {
    assert.deepEqual((error as SessionError).issues, [
      { path: "pricing.foo", rule: "unknown_key" },
      { path: "pricing.bar", rule: "unknown_key" },
    ]);
  }
  assertSessionError(() => parseInput(z.strictObject({}), { x: 1 }), {
    code: "INVALID_ARGUMENT",
    path: "x",
    rule: "unknown_key",
  });
});

test("send()'s refused media is at its field: content.N.image or .data, or parts.N.url for a UIMessage", () => {
  const refused = (input: unknown, path: string) =>
    assertSessionError(() => toUserMessage(input, userModelMessageSchema), {
      code: "INVALID_MESSAGE",
      path,
      rule: "invalid",
    });
  const text = { type: "text", text: "look" };
  refused({ role: "user", content: [text, { type: "image", image: "%%%" }] }, "content.1.image");
  refused(
    { role: "user", content: [{ type: "file", data: "ftp://x", mediaType: "image/png" }] },
    "content.0.data",
  );
  refused(
    { role: "user", parts: [text, { type: "file", url: "javascript:1", mediaType: "image/png" }] },
    "parts.1.url",
  );
});

test("the message a transfer record holds is checked at the record's content", () => {
  const message = { id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] };
  const record = (content: unknown) => ({
    kind: "message" as const,
    message: { id: "m1", parentId: null, role: "user", createdAt: at, content: JSON.stringify(content) },
  });
  assertTransferItem(record(message));
  assertSessionError(() => assertTransferItem(record({ ...message, parts: "hi" })), {
    code: "INVALID_MESSAGE",
    path: "content.parts",
    rule: "type",
  });
  assertSessionError(() => assertTransferItem(record({ ...message, id: "m2" })), {
    code: "INVALID_MESSAGE",
    path: "content.id",
    rule: "conflict",
  });
  assertSessionError(() => assertTransferItem(record({ ...message, role: "assistant" })), {
    code: "INVALID_MESSAGE",
    path: "content.role",
    rule: "conflict",
  });
});

test("hand-written store and id checks name the argument as the caller wrote it", async () => {
  const store = new MemoryStore();
  try {
    const provider = store.session("a");
    await rejectsWithIssue(provider.deleteMessages(["m1", 5 as never]), {
      code: "INVALID_ARGUMENT",
      path: "messageIds.1",
      rule: "type",
    });
    await rejectsWithIssue(provider.getSiblings(""), {
      code: "INVALID_ARGUMENT",
      path: "messageId",
      rule: "format",
    });
    await rejectsWithIssue(provider.addCompaction(5 as never, "m1", "m2"), {
      code: "INVALID_ARGUMENT",
      path: "summary",
      rule: "type",
    });
    await rejectsWithIssue(store.registry.pin("a", "yes" as never), {
      code: "INVALID_ARGUMENT",
      path: "pinned",
      rule: "type",
    });
    assertSessionError(() => store.subscribe(() => undefined, { after: -1 }), {
      code: "INVALID_ARGUMENT",
      path: "after",
      rule: "range",
    });
    assertSessionError(() => store.session("\u0000"), {
      code: "INVALID_ARGUMENT",
      path: "sessionId",
      rule: "format",
    });
  } finally {
    await store.close();
  }
  assertSessionError(() => batchBounds({ batchSize: 0 }), {
    code: "INVALID_ARGUMENT",
    path: "batchSize",
    rule: "range",
  });
  assertSessionError(() => toolNamesArg(["search", ""]), {
    code: "INVALID_ARGUMENT",
    path: "toolNames.1",
    rule: "format",
  });
  assertSessionError(() => assertStateMessages([{ id: "m1" }, { id: "m1" }]), {
    code: "INVALID_MESSAGE",
    path: "messages.1.id",
    rule: "conflict",
  });
  assertSessionError(() => toUserMessage({ role: "system", content: "x" }, userModelMessageSchema), {
    code: "INVALID_MESSAGE",
    path: "role",
    rule: "one_of",
  });
});

test("getRecentHistory's options and the MCP server's store name the refused field in issues", async () => {
  const store = new MemoryStore();
  try {
    const session = Session.create(store);
    await rejectsWithIssue(session.getRecentHistory(100, "x" as never), {
      code: "INVALID_ARGUMENT",
      path: "options",
      rule: "type",
    });
    await rejectsWithIssue(session.getRecentHistory(100, null as never), {
      code: "INVALID_ARGUMENT",
      path: "options",
      rule: "type",
    });
    assert.deepEqual(
      await session.getRecentHistory(100, { minRecentMessages: 1 }),
      await session.getRecentHistory(100),
    );
    const manager = new SessionManager(store);
    for (const options of [{}, { store, manager }])
      await rejectsWithIssue(createMcpServer(options), {
        code: "INVALID_ARGUMENT",
        path: "store",
        rule: "required",
      });
  } finally {
    await store.close();
  }
});

test("SQLite store options and sources name the refused field in issues", () => {
  const refused: [() => unknown, string, SessionIssueRule][] = [
    [() => new SqliteStore(":memory:", { busyTimeoutMs: -1 }), "busyTimeoutMs", "range"],
    [() => new SqliteStore(":memory:", { pageCacheMiB: 0 }), "pageCacheMiB", "range"],
    [() => new SqliteStore(":memory:", { durability: "fast" as never }), "durability", "one_of"],
    [() => new SqliteStore(":memory:", { maxValueBytes: 10 }), "maxValueBytes", "range"],
    [() => new SqliteStore(""), "source", "required"],
    [() => new SqliteStore(42 as never), "source", "type"],
    [() => new SqliteStore(null as never), "source", "type"],
    [() => new SqliteStore(":memory:", { changeLog: { retain: 0 } }), "changeLog.retain", "range"],
    [() => new SqliteStore(":memory:", { changeLog: { pollMs: Infinity } }), "changeLog.pollMs", "range"],
    [() => new SqliteStore(":memory:", { changeLog: "yes" as never }), "changeLog", "type"],
    [() => new SqliteStore(":memory:", { keyring: 5 as never }), "keyring", "type"],
    [() => new SqliteStore(":memory:", { keyring: {} as never }), "keyring.key", "type"],
    [
      () => new SqliteStore(":memory:", { keyring: { key: () => undefined, forget: 5 } as never }),
      "keyring.forget",
      "type",
    ],
  ];
  for (const [open, path, rule] of refused)
    assertSessionError(open, { code: "INVALID_ARGUMENT", path, rule });
});

test("Postgres store options and sources name the refused field in issues", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  try {
    const refused: [() => unknown, string, SessionIssueRule][] = [
      [() => new PostgresStore(db, { schema: "not an identifier" }), "schema", "format"],
      [() => new PostgresStore(db, { tablePrefix: "bad-prefix" }), "tablePrefix", "format"],
      [() => new PostgresStore(db, { tablePrefix: "p".repeat(40) }), "tablePrefix", "too_long"],
      [() => new PostgresStore(db, { distributed: "yes" as never }), "distributed", "type"],
      [() => new PostgresStore(db, { schema: 5 as never }), "schema", "format"],
      [() => new PostgresStore(db, { tablePrefix: 5 as never }), "tablePrefix", "format"],
      [() => new PostgresStore(42 as never), "source", "type"],
      [() => new PostgresStore(db, { keyring: 5 as never }), "keyring", "type"],
      [() => new PostgresStore(db, { keyring: {} as never }), "keyring.key", "type"],
      [
        () => new PostgresStore(db, { keyring: { key: () => undefined, forget: 5 } as never }),
        "keyring.forget",
        "type",
      ],
    ];
    for (const [open, path, rule] of refused)
      assertSessionError(open, { code: "INVALID_ARGUMENT", path, rule });
    const store = await PostgresStore.open(db, { schema: "issues" });
    await rejectsWithIssue(store.purge({ mode: "fast" as never }), {
      code: "INVALID_ARGUMENT",
      path: "mode",
      rule: "one_of",
    });
    await rejectsWithIssue(store.purge({ lockTimeoutMs: 0 }), {
      code: "INVALID_ARGUMENT",
      path: "lockTimeoutMs",
      rule: "range",
    });
    await store.close();
  } finally {
    await db.close();
  }
});
