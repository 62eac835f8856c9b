// Resumable answers (agent-session/ai resumableStreams): a reader that joins a running answer gets what was already
// sent, then the rest, byte for byte the events the page got; the answer is stored once and its chunks dropped.
// On memory (one process), SQLite and Postgres (the reader on a second store instance: another process).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { resumableStreams } from "../../src/ai-sdk/index.js";
import { MemoryStore, type SessionStore, SqliteStore } from "../../src/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { dropSchema, postgresUnavailable, testPool } from "../fixtures/postgres-db.js";
import { NodeChat, textOf } from "./harness.js";
import { events, GatedModel, resumableRoute, until, userMessage } from "./resumable-harness.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-resumable-"));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Target {
  name: string;
  /** The writer's store and the reader's (another instance over the same data where there can be one). */
  open(): Promise<{ writer: SessionStore; reader: SessionStore; close(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: "memory",
    open: async () => {
      const store = new MemoryStore();
      return { writer: store, reader: store, close: () => store.close() };
    },
  },
  {
    name: "sqlite",
    open: async () => {
      const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
      const writer = new SqliteStore(path);
      const reader = new SqliteStore(path);
      return { writer, reader, close: () => closeBoth(writer, reader) };
    },
  },
];
const pgSkip = await postgresUnavailable();
if (pgSkip) console.log(`Skipping the Postgres resumable-stream tests: ${pgSkip}`);
else {
  const pool = testPool();
  const schema = `agent_session_test_resume_${process.pid}`;
  await dropSchema(pool, schema);
  after(async () => {
    await dropSchema(pool, schema);
    await pool.end();
  });
  targets.push({
    name: "postgres",
    open: async () => {
      const writer = await PostgresStore.open(pool, { schema });
      const reader = await PostgresStore.open(pool, { schema });
      return { writer, reader, close: () => closeBoth(writer, reader) };
    },
  });
}

// How long a finished answer's chunks stay: the readers here poll every 5 ms, so they catch up long before; a reader
// further behind than this would end with an error event (docs/AI-SDK.md), which the tests would see.
const LINGER_MS = 2000;

async function closeBoth(a: SessionStore, b: SessionStore): Promise<void> {
  await a.close();
  await b.close();
}

const get = (id: string) => new Request(`http://chat.test/api/chat/${id}/stream`);
const post = (id: string, text: string) =>
  new Request("http://chat.test/api/chat", {
    method: "POST",
    body: JSON.stringify({ id, messages: [userMessage("u1", text)], trigger: "submit-message" }),
  });

for (const target of targets) {
  describe(`resumable answers on ${target.name}`, () => {
    test("a reader joining mid-answer gets what was sent, then the rest; the answer is stored once, no chunk kept", async () => {
      const { writer, reader, close } = await target.open();
      try {
        const model = new GatedModel();
        const writing = resumableStreams({ store: writer, lingerMs: LINGER_MS });
        const reading = resumableStreams({ store: reader, pollMs: 5 });
        const route = resumableRoute(writer, writing, model);
        const readRoute = resumableRoute(reader, reading, model);
        assert.equal((await readRoute(get("c1"))).status, 204, "no answer running yet");

        const page = await route(post("c1", "Count"));
        const pageEvents = events(page);
        await model.called;
        model.say("One ", "two ");
        // start, start-step, text-start and two deltas are kept before the reader joins.
        await until(async () => (await writing.streams.countChunks()) >= 5, "the first chunks are kept");
        const rejoined = await readRoute(get("c1"));
        assert.equal(rejoined.status, 200);
        assert.equal(rejoined.headers.get("x-vercel-ai-ui-message-stream"), "v1");
        const rejoinedEvents = events(rejoined);
        model.say("three.");
        model.finish();

        const sent = await pageEvents;
        assert.deepEqual(await rejoinedEvents, sent, "the reader got every event the page got, in order");
        assert.equal(sent.at(-1), "[DONE]");
        await until(async () => (await writing.streams.countChunks()) === 0, "the chunks are dropped");
        assert.equal((await readRoute(get("c1"))).status, 204, "no answer running after it finished");
        const history = await reader.session("c1").getHistory();
        assert.deepEqual(
          history.map((m) => [m.role, textOf(m)]),
          [
            ["user", "Count"],
            ["assistant", "One two three."],
          ],
        );
      } finally {
        await close();
      }
    });

    test("useChat's resumeStream on a reloaded page shows the whole answer once", async () => {
      const { writer, reader, close } = await target.open();
      try {
        const model = new GatedModel();
        const writing = resumableStreams({ store: writer, lingerMs: LINGER_MS });
        const reading = resumableStreams({ store: reader, pollMs: 5 });
        const first = new NodeChat("c2", resumableRoute(writer, writing, model));
        const sending = first.sendMessage({ text: "Hello" });
        await model.called;
        model.say("Hi ", "there, ");
        await until(async () => (await writing.streams.countChunks()) >= 5, "the first chunks are kept");
        // The reload: the page gets the stored history (the user message) and rejoins the answer.
        const stored = await reader.session("c2").getHistory();
        const reloaded = new NodeChat("c2", resumableRoute(reader, reading, model), stored as never);
        const resuming = reloaded.resumeStream();
        model.say("friend.");
        model.finish();
        await Promise.all([sending, resuming]);
        assert.deepEqual(
          reloaded.messages.map((m) => [m.role, textOf(m)]),
          [
            ["user", "Hello"],
            ["assistant", "Hi there, friend."],
          ],
        );
        const history = await reader.session("c2").getHistory();
        assert.equal(history.length, 2);
        assert.equal(history[1]!.id, reloaded.messages[1]!.id, "the page's answer is the stored one");
        await until(async () => (await writing.streams.countChunks()) === 0, "the chunks are dropped");
      } finally {
        await close();
      }
    });
  });
}
