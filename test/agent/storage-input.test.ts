// Agent storages: usage order after resume, bad input and reserved metadata refused, one of two concurrent creates
// of an id a CONFLICT, corrupt state a STORAGE error, and a step over the size cap stored whole or not at all.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Redis } from "ioredis";
import pg from "pg";
import {
  type AgentMessage,
  createSession,
  FileSessionStorage,
  forkSession,
  MemorySessionStorage,
  PostgresSessionStorage,
  RedisSessionStorage,
  type SessionStorage,
  SQLiteSessionStorage,
  StoreSessionStorage,
} from "../../src/agent/index.js";
import { headerKey } from "../../src/agent/storage/mapping.js";
import type { AgentCapableStore } from "../../src/agent/storage/store-writes.js";
import { MemoryStore } from "../../src/index.js";
import { entry, sampleState } from "../../src/testing/storage/fixtures.js";
import { PG_URL } from "../fixtures/postgres-db.js";
import { scriptedModel } from "./helpers/mock-model.js";
import { serverSkip } from "./helpers/servers.js";
import { turn } from "./helpers/session.js";

// Regression tests for fuzzing findings: ledger order after resume, TypeErrors on bad input, reserved metadata,
// concurrent creates, corrupt stored data, half-stored steps. Each runs on every storage where it applies.

const REDIS_URL = "redis://127.0.0.1:6379";
const [pgSkip, redisSkip] = await Promise.all([
  serverSkip("PostgreSQL", "127.0.0.1", 5432),
  serverSkip("Redis", "127.0.0.1", 6379),
]);

let counter = 0;
const unique = () => `fz${process.pid}_${++counter}`;
const schemas: string[] = [];
const dirs: string[] = [];
const admin = pgSkip === false ? new pg.Pool({ connectionString: PG_URL, max: 1 }) : undefined;
after(async () => {
  for (const schema of schemas) await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A backend: `open` makes a storage, `twin` a second one on the same data (another process), `poke` raw access. */
interface Opened {
  storage: SessionStorage;
  twin?: () => Promise<SessionStorage>;
  /** Overwrites a stored piece of a session with corrupt data (per backend). */
  corrupt?: (id: string, variant: string) => Promise<void>;
  corruptions?: string[];
  close: () => Promise<void>;
}

async function wipe(storage: SessionStorage): Promise<void> {
  for (const id of await storage.list()) await storage.delete(id);
  await storage.close?.();
}

/** Corrupts the header block of a store-backed session: usage missing, [null], 5; metadata a number. */
function headerCorruptor(store: () => Promise<AgentCapableStore>) {
  return async (id: string, variant: string) => {
    const blocks = (await store()).blocks;
    const header = JSON.parse((await blocks.getBlock(headerKey(id)))!) as Record<string, unknown>;
    if (variant === "usage missing") delete header.usage;
    else if (variant === "usage [null]") header.usage = [null];
    else if (variant === "usage 5") header.usage = 5;
    else header.metadata = 7;
    await blocks.setBlock(headerKey(id), JSON.stringify(header));
  };
}
const HEADER_CORRUPTIONS = ["usage missing", "usage [null]", "usage 5", "metadata 7"];

const backends: { name: string; skip: string | false; open: () => Promise<Opened> }[] = [
  {
    name: "memory",
    skip: false,
    open: async () => {
      const storage = new MemorySessionStorage();
      return { storage, close: async () => undefined };
    },
  },
  {
    name: "file",
    skip: false,
    open: async () => {
      const dir = await mkdtemp(join(tmpdir(), "agent-fuzz-"));
      dirs.push(dir);
      return {
        storage: new FileSessionStorage(dir, { fsync: false }),
        twin: async () => new FileSessionStorage(dir, { fsync: false }),
        corrupt: (id, variant) => writeFile(join(dir, `${id}.json`), variant),
        corruptions: ["{}", "[]", "42", "null"],
        close: async () => undefined,
      };
    },
  },
  {
    name: "sqlite",
    skip: false,
    open: async () => {
      const storage = new SQLiteSessionStorage(":memory:");
      return {
        storage,
        corrupt: headerCorruptor(() => storage.store()),
        corruptions: HEADER_CORRUPTIONS,
        close: () => storage.close(),
      };
    },
  },
  {
    name: "store (MemoryStore)",
    skip: false,
    open: async () => {
      const storage = new StoreSessionStorage(new MemoryStore());
      return {
        storage,
        corrupt: headerCorruptor(() => storage.store()),
        corruptions: HEADER_CORRUPTIONS,
        close: () => storage.close(),
      };
    },
  },
  {
    name: "postgres",
    skip: pgSkip,
    open: async () => {
      const schema = `agent_fuzz_${unique()}`;
      schemas.push(schema);
      const storage = new PostgresSessionStorage(PG_URL, { schema });
      const twins: SessionStorage[] = [];
      return {
        storage,
        twin: async () => {
          const twin = new PostgresSessionStorage(PG_URL, { schema });
          twins.push(twin);
          return twin;
        },
        corrupt: headerCorruptor(() => storage.store()),
        corruptions: HEADER_CORRUPTIONS,
        close: async () => {
          for (const twin of twins) await twin.close?.();
          await storage.close();
        },
      };
    },
  },
  {
    name: "redis",
    skip: redisSkip,
    open: async () => {
      const prefix = `agent-fuzz-test:${unique()}:`;
      const storage = new RedisSessionStorage(REDIS_URL, { prefix });
      const others: SessionStorage[] = [];
      return {
        storage,
        twin: async () => {
          const twin = new RedisSessionStorage(REDIS_URL, { prefix });
          others.push(twin);
          return twin;
        },
        corrupt: async (id, variant) => {
          const client = new Redis(REDIS_URL);
          try {
            const key = `${prefix}{${id}}:`;
            if (variant === "usage item null") await client.lset(`${key}usage`, 0, "null");
            else if (variant === "usage item 5") await client.lset(`${key}usage`, 0, "5");
            else await client.hset(`${key}meta`, "metadata", "7");
          } finally {
            client.disconnect();
          }
        },
        corruptions: ["usage item null", "usage item 5", "metadata 7"],
        close: async () => {
          for (const other of others) await other.close?.();
          await wipe(storage);
        },
      };
    },
  },
];

const message = (id: string, text: string) =>
  ({ id, role: "assistant", content: text, createdAt: 5 }) as AgentMessage;

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { a: 1 };
  value.self = value;
  return value;
}
const throwingToJson = () => ({
  toJSON() {
    throw new Error("no JSON for you");
  },
});

for (const backend of backends) {
  describe(`agent storage input, order and creation on ${backend.name}`, { skip: backend.skip }, () => {
    it("a message-less step's ledger entry loads in the order it was written", async () => {
      const { storage, close } = await backend.open();
      try {
        const state = sampleState();
        state.usage = { ...state.usage, entries: [] };
        await storage.save(state);
        await storage.appendMessages!(state.id, [message("a1", "one")], { updatedAt: 2, usage: [entry(1)] });
        await storage.appendMessages!(state.id, [], { updatedAt: 3, usage: [entry(2)] });
        await storage.appendMessages!(state.id, [message("a3", "three")], {
          updatedAt: 4,
          usage: [entry(3)],
        });
        await storage.appendMessages!(state.id, [], { updatedAt: 5, usage: [entry(4)] });
        const loaded = await storage.load(state.id);
        assert.deepEqual(
          loaded?.usage.entries.map((e) => e.turn),
          [1, 2, 3, 4],
        );
      } finally {
        await close();
      }
    });

    it("an empty model reply keeps the live ledger order after resume", async () => {
      const { storage, close } = await backend.open();
      try {
        const session = await createSession({
          model: scriptedModel([{ text: "One." }, {}]),
          sessionStorage: storage,
        });
        await turn(session, "first");
        await turn(session, "second");
        const live = session.getUsage().entries.map((e) => e.turn);
        assert.deepEqual(live, [1, 2]);
        await session.close();
        assert.deepEqual(
          (await storage.load(session.id))?.usage.entries.map((e) => e.turn),
          live,
        );
      } finally {
        await close();
      }
    });

    it("appendMessages with a null patch, null messages or unstorable values is refused, writing nothing", async () => {
      const { storage, close } = await backend.open();
      try {
        const state = sampleState();
        await storage.save(state);
        const before = await storage.load(state.id);
        const append = storage.appendMessages!.bind(storage) as (...args: unknown[]) => Promise<void>;
        await assert.rejects(append(state.id, [], null), { code: "INVALID_ARGUMENT" });
        await assert.rejects(append(state.id, [message("x1", "a")], undefined), { code: "INVALID_ARGUMENT" });
        await assert.rejects(append(state.id, null, { updatedAt: 9 }), { code: "INVALID_MESSAGE" });
        await assert.rejects(append(state.id, [null], { updatedAt: 9 }), { code: "INVALID_MESSAGE" });
        await assert.rejects(append(state.id, [], { updatedAt: 9, usage: [null] }), {
          code: "INVALID_ARGUMENT",
        });
        await assert.rejects(append(state.id, [message("x2", "a")], { updatedAt: 9, metadata: circular() }), {
          code: "INVALID_ARGUMENT",
        });
        await assert.rejects(
          append(state.id, [{ ...message("x3", "a"), providerOptions: circular() }], { updatedAt: 9 }),
          { code: "INVALID_ARGUMENT" },
        );
        await assert.rejects(
          append(state.id, [message("x4", "a")], { updatedAt: 9, metadata: { bad: throwingToJson() } }),
          { code: "INVALID_ARGUMENT" },
        );
        assert.deepEqual(await storage.load(state.id), before);
      } finally {
        await close();
      }
    });

    it("createSession refuses circular or unserialisable metadata, null pricing, and send() a circular message", async () => {
      const { storage, close } = await backend.open();
      try {
        const model = scriptedModel([{ text: "never" }]);
        const sessionId = `bad-${unique()}`;
        await assert.rejects(
          createSession({ model, sessionStorage: storage, sessionId, metadata: circular() }),
          {
            code: "INVALID_ARGUMENT",
          },
        );
        await assert.rejects(
          createSession({ model, sessionStorage: storage, sessionId, metadata: { x: throwingToJson() } }),
          { code: "INVALID_ARGUMENT" },
        );
        await assert.rejects(
          createSession({ model, sessionStorage: storage, sessionId, pricing: null as never }),
          { code: "INVALID_ARGUMENT" },
        );
        assert.equal(await storage.load(sessionId), undefined);
        const session = await createSession({ model, sessionStorage: storage });
        await assert.rejects(
          session.send({
            role: "user",
            content: [{ type: "text", text: "hi", providerOptions: circular() as never }],
          }),
          { code: "INVALID_MESSAGE" },
        );
        await assert.rejects(
          session.send({ role: "user", content: "hi", providerOptions: { x: throwingToJson() } as never }),
          { code: "INVALID_MESSAGE" },
        );
        assert.equal(session.running, false);
        assert.deepEqual((await storage.load(session.id))?.messages, []);
        await session.close();
      } finally {
        await close();
      }
    });

    it("reserved agent.* metadata keys are refused on create and fork", async () => {
      const { storage, close } = await backend.open();
      try {
        const model = scriptedModel([{ text: "never" }]);
        const sessionId = `reserved-${unique()}`;
        await assert.rejects(
          createSession({
            model,
            sessionStorage: storage,
            sessionId,
            metadata: { "agent.turn": { number: 7, status: "running", startedAt: 1 } },
          }),
          { code: "INVALID_ARGUMENT" },
        );
        assert.equal(await storage.load(sessionId), undefined);
        const source = await createSession({ model, sessionStorage: storage });
        await source.close();
        await assert.rejects(
          forkSession(source.id, { model, sessionStorage: storage, metadata: { "agent.other": 1 } }),
          { code: "INVALID_ARGUMENT" },
        );
        assert.deepEqual(await storage.list(), [source.id]);
      } finally {
        await close();
      }
    });

    it("two concurrent creates of the same sessionId: exactly one succeeds, the other is a CONFLICT", async () => {
      const opened = await backend.open();
      try {
        const storages = [opened.storage, opened.twin ? await opened.twin() : opened.storage];
        for (const pair of [[opened.storage, opened.storage], storages]) {
          const sessionId = `dup-${unique()}`;
          const results = await Promise.allSettled(
            pair.map((sessionStorage, i) =>
              createSession({
                model: scriptedModel([]),
                sessionStorage,
                sessionId,
                metadata: { who: i },
              }),
            ),
          );
          const won = results.filter((r) => r.status === "fulfilled");
          const lost = results.filter((r) => r.status === "rejected");
          assert.equal(won.length, 1, `one create wins, got ${won.length}`);
          assert.equal((lost[0] as PromiseRejectedResult).reason?.code, "CONFLICT");
          const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof createSession>>>).value;
          await winner.close();
          const stored = await opened.storage.load(sessionId);
          assert.equal(stored?.metadata.who, results.indexOf(won[0]!));
        }
      } finally {
        await opened.close();
      }
    });

    it("corrupt stored data loads as a STORAGE error naming the session", async (t) => {
      const { storage, corrupt, corruptions, close } = await backend.open();
      try {
        if (!corrupt || !corruptions) {
          t.skip("no raw access to this backend's stored data");
          return;
        }
        for (const variant of corruptions) {
          const state = sampleState();
          await storage.save(state);
          await corrupt(state.id, variant);
          await assert.rejects(storage.load(state.id), { code: "STORAGE" }, `variant ${variant}`);
        }
      } finally {
        await close();
      }
    });
  });
}

describe("StoreSessionStorage over a MemoryStore with maxMessageBytes", () => {
  it("a step whose tool result is TOO_LARGE is stored whole or not at all", async () => {
    const store = new MemoryStore({ maxMessageBytes: 2048 });
    const storage = new StoreSessionStorage(store);
    const state = sampleState();
    await storage.save(state);
    const before = await storage.load(state.id);
    const call = {
      id: "call-msg",
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "c9", toolName: "big", input: {} }],
    } as AgentMessage;
    const result = {
      id: "result-msg",
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c9",
          toolName: "big",
          output: { type: "text", value: "x".repeat(10_000) },
        },
      ],
    } as AgentMessage;
    await assert.rejects(
      storage.appendMessages(state.id, [call, result], { updatedAt: 9, usage: [entry(3)] }),
      {
        code: "TOO_LARGE",
      },
    );
    assert.deepEqual(await storage.load(state.id), before);
    assert.equal(await store.session(state.id).getMessage("call-msg"), null);
  });
});
