// Two requests for one chat at once, from two app processes on one store (SQLite file, Postgres schema): the one
// that comes second is refused with CONFLICT before its model runs, the same message is never answered twice,
// and two different messages never fork the chat. In one process, on every backend, the same rules hold for two
// requests that plan at the same moment.
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { UIMessage } from "ai";
import { chatErrorResponse, persistChatTurn } from "../../src/ai-sdk/index.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { dropSchema, PG_URL, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { postgresStores } from "../fixtures/postgres-stores.js";

const text = (id: string, role: "user" | "assistant", body: string): UIMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});
const page = [text("u0", "user", "hi"), text("a0", "assistant", "hello")];
const body = (id: string, last: UIMessage) => ({
  id,
  messages: [...page, last],
  trigger: "submit-message" as const,
});

/** One app process (test/fixtures/chat-request.ts): send it a request line, read its JSON answer line. */
class AppProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  constructor(args: string[]) {
    const script = fileURLToPath(new URL("../fixtures/chat-request.ts", import.meta.url));
    this.child = spawn(process.execPath, ["--import", "tsx", script, ...args]);
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
    let stderr = "";
    this.child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    this.child.on("exit", (code) => {
      if (code !== 0) console.error(`chat-request exited ${code}: ${stderr}`);
    });
  }
  async send(line: string): Promise<Record<string, unknown>> {
    this.child.stdin.write(`${line}\n`);
    const next = await this.lines.next();
    assert.ok(!next.done, "the app process answered");
    return JSON.parse(next.value) as Record<string, unknown>;
  }
  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin.end();
    await exited;
  }
}

/** The scenario on one store, two app processes started with `args`. */
function twoProcesses(name: string, open: () => Promise<SessionStore>, args: () => string[]) {
  describe(`two app processes, one chat (${name})`, { concurrency: false }, () => {
    test("the same message twice, and another message, while the first answer runs: both refused", async () => {
      const store = await open();
      const session = Session.create(store).forSession("race");
      for (const message of page) await session.appendMessage(message);
      const [a, b] = [new AppProcess(args()), new AppProcess(args())];
      try {
        assert.deepEqual(await a.send(JSON.stringify(body("race", text("u1", "user", "Thursday?")))), {
          planned: "u1",
        });
        // Process b gets the same request (a retry, a second tab) while a's model still runs.
        assert.deepEqual(await b.send(JSON.stringify(body("race", text("u1", "user", "Thursday?")))), {
          refused: "CONFLICT",
        });
        // And another message from a page that has not seen u1.
        assert.deepEqual(await b.send(JSON.stringify(body("race", text("u2", "user", "Or Friday?")))), {
          refused: "CONFLICT",
        });
        assert.deepEqual(await a.send("finish Thursday works."), { finished: true });
        assert.deepEqual(
          (await session.getHistory()).map((m) => m.id),
          ["u0", "a0", "u1", `answer-${(a as unknown as { child: { pid: number } }).child.pid}`],
        );
        assert.equal((await session.getBranches("a0")).length, 1, "no fork");
        assert.equal((await session.getBranches("u1")).length, 1, "one answer");
        // Once the page reloads (loadChat), its next message is taken.
        const reloaded = await session.getHistory();
        assert.deepEqual(
          await b.send(JSON.stringify({ id: "race", messages: [...reloaded, text("u3", "user", "ok")] })),
          {
            planned: "u3",
          },
        );
      } finally {
        await Promise.all([a.close(), b.close()]);
        await store.close();
      }
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "agent-session-chat-race-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "chat.db");
twoProcesses(
  "SQLite file",
  async () => new SqliteStore(file),
  () => ["sqlite", file],
);

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the Postgres processes of chat-concurrency: ${unavailable}`);
else {
  const schema = `agent_session_chat_race_${process.pid}`;
  const pool = testPool(2);
  await dropSchema(pool, schema);
  after(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  twoProcesses(
    "Postgres",
    async () => PostgresStore.open(pool, { schema }),
    () => ["postgres", PG_URL, schema],
  );
}

const postgres = await postgresStores("chat_concurrency");
const backends: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];
if (postgres) backends.push(["postgres", postgres]);

for (const [name, create] of backends) {
  describe(`two requests of one chat in one process (${name})`, () => {
    async function seeded(id: string): Promise<[SessionStore, Session]> {
      const store = create();
      const session = Session.create(store).forSession(id);
      for (const message of page) await session.appendMessage(message);
      return [store, session];
    }
    const settle = (store: SessionStore, id: string, last: UIMessage) =>
      persistChatTurn(Session.create(store).forSession(id), body(id, last));

    test("planned at the same moment: one is stored, the other is CONFLICT, never both", async () => {
      for (const [id, second] of [
        ["same", text("u1", "user", "Thursday?")],
        ["other", text("u2", "user", "Or Friday?")],
      ] as const) {
        const [store, session] = await seeded(id);
        const results = await Promise.allSettled([
          settle(store, id, text("u1", "user", "Thursday?")),
          settle(store, id, second),
        ]);
        const refused = results.filter((r) => r.status === "rejected");
        assert.equal(refused.length, 1, `${id}: ${JSON.stringify(results.map((r) => r.status))}`);
        assert.equal((refused[0] as PromiseRejectedResult).reason.code, "CONFLICT");
        assert.equal((await session.getBranches("a0")).length, 1, `${id}: no fork`);
      }
    });

    test("a message sent while an answer still streams (a reloaded page): the late answer is refused, no fork", async () => {
      const [store, session] = await seeded("late");
      const first = await settle(store, "late", text("u1", "user", "Thursday?"));
      // The page reloaded mid-answer: it shows [u0, a0, u1] and sends u2 after u1, which has no answer yet.
      const second = await persistChatTurn(Session.create(store).forSession("late"), {
        messages: [...page, text("u1", "user", "Thursday?"), text("u2", "user", "Or Friday?")],
        trigger: "submit-message",
      });
      assert.equal(second.parentId, "u2");
      // saveResponse (generateText's saveResult) rejects; a stream's onFinish ends it normally (chat-late-answer).
      await assert.rejects(first.saveResponse(text("a1", "assistant", "Thursday works.")), {
        code: "CONFLICT",
      });
      await second.onFinish({ responseMessage: text("a2", "assistant", "Friday too.") });
      assert.deepEqual(
        (await session.getHistory()).map((m) => m.id),
        ["u0", "a0", "u1", "u2", "a2"],
      );
      assert.equal((await session.getBranches("u1")).length, 1, "u2 is not hidden behind a late answer");
    });

    test("a submit of a message already answered is CONFLICT; a regenerate of it is a sibling answer", async () => {
      const [store, session] = await seeded("answered");
      await assert.rejects(settle(store, "answered", text("u0", "user", "hi")), { code: "CONFLICT" });
      const turn = await persistChatTurn(session, {
        messages: [page[0]!],
        trigger: "regenerate-message",
      });
      assert.equal(turn.parentId, "u0");
    });

    test("a page posting a new conversation onto a chat that has messages is CONFLICT, not a new root", async () => {
      const [store, session] = await seeded("new-root");
      await assert.rejects(
        persistChatTurn(Session.create(store).forSession("new-root"), {
          messages: [text("x1", "user", "a whole other chat")],
          trigger: "submit-message",
        }),
        { code: "CONFLICT" },
      );
      assert.deepEqual(
        (await session.getHistory()).map((m) => m.id),
        ["u0", "a0"],
      );
    });

    test("chatErrorResponse: CONFLICT is a 409 the page can read; a store failure is thrown on", async () => {
      const [store] = await seeded("http");
      const error = await settle(store, "http", text("u0", "user", "hi")).catch((e: unknown) => e);
      const response = chatErrorResponse(error);
      assert.equal(response.status, 409);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, "CONFLICT");
      assert.throws(() => chatErrorResponse(new Error("disk full")), /disk full/);
    });
  });
}
