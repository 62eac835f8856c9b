import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Redis } from "ioredis";
import { RedisSessionStorage } from "../../src/agent/index.js";
import { CHUNK_BYTES, CHUNK_ITEMS, PIECE_BYTES } from "../../src/agent/storage/redis-chunks.js";
import { LOAD_NEXT, PUSH_CHUNK } from "../../src/agent/storage/redis-scripts.js";
import type { AgentMessage, SessionState } from "../../src/agent/types.js";
import { sumUsage } from "../../src/agent/usage.js";
import { entry } from "../../src/testing/storage/fixtures.js";
import { serverSkip } from "./helpers/servers.js";

const URL = "redis://127.0.0.1:6379";
const skip = await serverSkip("Redis", "127.0.0.1", 6379);

let counter = 0;
const prefix = () => `agent-chunk-test:${process.pid}:${++counter}:`;
const opened: { client: Redis; prefix: string }[] = [];
const storages: RedisSessionStorage[] = [];

/** A storage closed after the suite even when its test fails (an open connection keeps the test process alive). */
function storageOf(source: Redis | string, keyPrefix: string): RedisSessionStorage {
  const storage = new RedisSessionStorage(source, keyPrefix);
  storages.push(storage);
  return storage;
}

/** What one eval carried: the bytes of its keys and arguments, and of the strings in its reply. */
interface Call {
  script: string;
  sent: number;
  received: number;
}

function size(value: unknown): number {
  if (typeof value === "string") return Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + size(item), 0);
  return 0;
}

/**
 * An ioredis client whose eval is recorded and can be interrupted: `before` runs before each eval (it may throw, or
 * write through another client, to act between two chunks), `calls` lists every eval.
 */
function spyClient(keyPrefix: string) {
  const client = new Redis(URL);
  opened.push({ client, prefix: keyPrefix });
  const calls: Call[] = [];
  const hooks: { before?: ((script: string, n: number) => Promise<void> | void) | undefined } = {};
  const spy = new Proxy(client, {
    get(target, key, receiver) {
      if (key !== "eval") return Reflect.get(target, key, receiver);
      return async (script: string, numKeys: number, ...rest: string[]) => {
        await hooks.before?.(script, calls.filter((call) => call.script === script).length);
        const call: Call = { script, sent: size(rest), received: 0 };
        calls.push(call);
        const reply = await target.eval(script, numKeys, ...rest);
        call.received = size(reply);
        return reply;
      };
    },
  });
  return { client, spy, calls, hooks };
}

const at = 1_700_000_000_000;
/** A state of `n` small messages and ledger entries plus `big` messages of ~`bigBytes` each (multi-byte text). */
function bigState(id: string, n: number, big: number, bigBytes: number): SessionState {
  // 1-, 2-, 3- and 4-byte characters, so pieces are cut next to every kind of UTF-8 sequence.
  const unit = "a✓é😀";
  const text = unit.repeat(Math.ceil(bigBytes / Buffer.byteLength(unit)));
  const every = Math.max(1, Math.floor((n + big) / Math.max(1, big)));
  const messages: AgentMessage[] = [];
  for (let i = 0; i < n + big; i++) {
    const content = i % every === 0 && i / every < big ? `${i}${text}` : `m ${i}`;
    messages.push({ id: `m${i}`, role: "user", content, createdAt: at + i });
  }
  const entries = Array.from({ length: n }, (_, i) => entry(i));
  return {
    id,
    messages,
    usage: { ...sumUsage(entries), entries },
    metadata: { title: "big" },
    createdAt: at,
    updatedAt: at + 1,
  };
}

async function tempKeys(client: Redis, keyPrefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${keyPrefix}*:tmp:*`, "COUNT", 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== "0");
  return found;
}

after(async () => {
  for (const storage of storages) await storage.close();
  for (const { client, prefix: keyPrefix } of opened) {
    if (client.status !== "ready") continue;
    const storage = storageOf(client, keyPrefix);
    for (const id of await storage.list()) await storage.delete(id);
    const left = await tempKeys(client, keyPrefix);
    if (left.length > 0) await client.unlink(...left);
    await client.quit();
  }
});

describe("RedisSessionStorage in chunks", { skip }, () => {
  it("a state of many chunks and pieces round-trips exactly, and no script carries more than a chunk", async () => {
    const keyPrefix = prefix();
    const { spy, calls } = spyClient(keyPrefix);
    const storage = storageOf(spy, keyPrefix);
    const state = bigState("big", CHUNK_ITEMS * 2 + 7, 3, 3 * CHUNK_BYTES);
    await storage.save(state);
    const loaded = await storage.load("big");
    assert.deepEqual(loaded, state);
    await storage.create({ ...state, id: "big-2" });
    assert.deepEqual((await storage.load("big-2"))?.messages, state.messages);
    // A chunk's elements, its headers (ids, times, metadata) and a read's last batch of 16 pieces.
    const bound = CHUNK_BYTES + 16 * PIECE_BYTES + 4096;
    const largest = Math.max(...calls.map((call) => Math.max(call.sent, call.received)));
    assert.ok(largest <= bound, `one script carried ${largest} bytes (bound ${bound})`);
    assert.ok(calls.length > 10, `${calls.length} scripts`);
  });

  it("a load that appends interleave with returns the messages and ledger of one moment", async () => {
    const keyPrefix = prefix();
    const { spy, hooks } = spyClient(keyPrefix);
    const reader = storageOf(spy, keyPrefix);
    const writer = storageOf(URL, keyPrefix);
    const base = bigState("grow", CHUNK_ITEMS * 2, 2, CHUNK_BYTES);
    await writer.save(base);
    let appended = 0;
    hooks.before = async (script) => {
      if (script !== LOAD_NEXT) return;
      appended++;
      const message: AgentMessage = {
        id: `a${appended}`,
        role: "assistant",
        content: `a${appended}`,
        createdAt: at,
      };
      await writer.appendMessages("grow", [message], {
        updatedAt: at + 100 + appended,
        usage: [entry(1000 + appended)],
      });
    };
    const loaded = await reader.load("grow");
    hooks.before = undefined;
    assert.ok(appended > 2, `${appended} appends during the load`);
    assert.ok(loaded !== undefined);
    const extra = loaded.messages.length - base.messages.length;
    assert.ok(extra >= 0 && extra <= appended);
    assert.equal(loaded.usage.entries.length, base.usage.entries.length + extra, "ledger of the same moment");
    assert.equal(loaded.updatedAt, extra === 0 ? base.updatedAt : at + 100 + extra);
    assert.deepEqual(loaded.messages.slice(0, base.messages.length), base.messages);
    assert.deepEqual(loaded.messages.at(-1)?.id, extra === 0 ? base.messages.at(-1)?.id : `a${extra}`);
    assert.deepEqual(
      loaded.usage.entries.at(-1)?.turn,
      extra === 0 ? base.usage.entries.at(-1)?.turn : 1000 + extra,
    );
  });

  it("a load during which the session is saved anew returns the new state whole", async () => {
    const keyPrefix = prefix();
    const { spy, hooks } = spyClient(keyPrefix);
    const reader = storageOf(spy, keyPrefix);
    const writer = storageOf(URL, keyPrefix);
    await writer.save(bigState("swap", CHUNK_ITEMS * 3, 0, 0));
    const replacement = { ...bigState("swap", CHUNK_ITEMS * 2, 1, CHUNK_BYTES), metadata: { title: "new" } };
    hooks.before = async (script, n) => {
      if (script === LOAD_NEXT && n === 0) await writer.save(replacement);
    };
    assert.deepEqual(await reader.load("swap"), replacement);
  });

  it("a save whose connection dies between chunks leaves the old state and no visible new one", async () => {
    const keyPrefix = prefix();
    const { client, spy, hooks } = spyClient(keyPrefix);
    const storage = storageOf(spy, keyPrefix);
    const other = storageOf(URL, keyPrefix);
    const old = bigState("dies", 3, 0, 0);
    await other.save(old);
    hooks.before = (script, n) => {
      if (script === PUSH_CHUNK && n === 2) client.disconnect();
    };
    await assert.rejects(storage.save(bigState("dies", CHUNK_ITEMS * 3, 1, CHUNK_BYTES)), {
      code: "STORAGE",
    });
    await assert.rejects(storage.create(bigState("dies-new", CHUNK_ITEMS * 3, 0, 0)), { code: "STORAGE" });
    assert.deepEqual(await other.load("dies"), old);
    assert.equal(await other.load("dies-new"), undefined);
    assert.deepEqual(await other.list(), ["dies"]);
    // The dead writer's temporary lists expire on their own.
    const { client: watcher } = spyClient(keyPrefix);
    const left = await tempKeys(watcher, keyPrefix);
    assert.ok(left.length > 0);
    for (const key of left) assert.ok((await watcher.pttl(key)) > 0, `${key} has a TTL`);
  });

  it("a save that fails between chunks on a live connection removes its temporary lists", async () => {
    const keyPrefix = prefix();
    const { client, spy, hooks } = spyClient(keyPrefix);
    const storage = storageOf(spy, keyPrefix);
    hooks.before = (script, n) => {
      if (script === PUSH_CHUNK && n === 1) throw new Error("injected");
    };
    await assert.rejects(storage.save(bigState("fails", CHUNK_ITEMS * 3, 0, 0)), /injected/);
    assert.equal(await storage.load("fails"), undefined);
    assert.deepEqual(await tempKeys(client, keyPrefix), []);
  });

  it("create of an existing id, or of one created between its chunks, writes nothing", async () => {
    const keyPrefix = prefix();
    const { client, spy, hooks } = spyClient(keyPrefix);
    const storage = storageOf(spy, keyPrefix);
    const other = storageOf(URL, keyPrefix);
    const first = bigState("taken", 2, 0, 0);
    await other.save(first);
    await assert.rejects(storage.create(bigState("taken", CHUNK_ITEMS * 3, 0, 0)), { code: "CONFLICT" });
    assert.deepEqual(await other.load("taken"), first);
    const winner = bigState("raced", 2, 0, 0);
    hooks.before = async (script, n) => {
      if (script === PUSH_CHUNK && n === 1) await other.create(winner);
    };
    await assert.rejects(storage.create(bigState("raced", CHUNK_ITEMS * 3, 0, 0)), { code: "CONFLICT" });
    assert.deepEqual(await other.load("raced"), winner);
    assert.deepEqual(await tempKeys(client, keyPrefix), []);
  });

  /** What an earlier release's save of `state` wrote, in one transaction: the hash without a gen, whole bodies. */
  async function earlierSave(client: Redis, keyPrefix: string, state: SessionState): Promise<void> {
    const key = `${keyPrefix}{${state.id}}:`;
    const tx = client.multi().del(`${key}meta`, `${key}messages`, `${key}usage`);
    tx.hset(`${key}meta`, {
      createdAt: state.createdAt,
      updatedAt: state.updatedAt,
      metadata: JSON.stringify(state.metadata),
      parentId: state.parentId ?? "",
    });
    tx.rpush(`${key}messages`, ...state.messages.map((m) => JSON.stringify(m)));
    if (state.usage.entries.length > 0)
      tx.rpush(`${key}usage`, ...state.usage.entries.map((e) => JSON.stringify(e)));
    await tx.zadd(`${keyPrefix}index`, state.createdAt, state.id).exec();
  }

  it("a load that an earlier release's save interleaves with returns one state whole", async () => {
    const keyPrefix = prefix();
    const { client, spy, hooks } = spyClient(keyPrefix);
    const reader = storageOf(spy, keyPrefix);
    const before = bigState("mixed", CHUNK_ITEMS * 2, 0, 0);
    const after = { ...bigState("mixed", CHUNK_ITEMS * 2 + 5, 0, 0), metadata: { title: "after" } };
    await earlierSave(client, keyPrefix, before);
    hooks.before = async (script, n) => {
      if (script === LOAD_NEXT && n === 0) await earlierSave(client, keyPrefix, after);
    };
    assert.deepEqual(await reader.load("mixed"), after);
  });

  it("a load that an earlier release's append interleaves with returns metadata of the same moment", async () => {
    const keyPrefix = prefix();
    const { client, spy, hooks } = spyClient(keyPrefix);
    const reader = storageOf(spy, keyPrefix);
    const base = bigState("grown", CHUNK_ITEMS * 2, 0, 0);
    await storageOf(URL, keyPrefix).save(base);
    const added: AgentMessage = { id: "added", role: "user", content: "later", createdAt: at + 9 };
    hooks.before = async (script, n) => {
      if (script !== LOAD_NEXT || n !== 0) return;
      // The earlier release's append: the new bodies and the times, no gen or version touched.
      const key = `${keyPrefix}{grown}:`;
      await client
        .multi()
        .hset(`${key}meta`, { updatedAt: at + 9, metadata: JSON.stringify({ title: "grown" }) })
        .rpush(`${key}messages`, JSON.stringify(added))
        .exec();
    };
    const loaded = await reader.load("grown");
    assert.deepEqual(loaded, {
      ...base,
      messages: [...base.messages, added],
      metadata: { title: "grown" },
      updatedAt: at + 9,
    });
  });

  it("reads sessions stored without a gen or pieces, and appends to them", async () => {
    const keyPrefix = prefix();
    const { client } = spyClient(keyPrefix);
    const storage = storageOf(client, keyPrefix);
    const message: AgentMessage = { id: "m1", role: "user", content: "hi", createdAt: at };
    const key = `${keyPrefix}{plain}:`;
    await client.hset(`${key}meta`, { createdAt: at, updatedAt: at, metadata: "{}", parentId: "" });
    await client.rpush(`${key}messages`, JSON.stringify(message));
    await client.rpush(`${key}usage`, JSON.stringify(entry(1)));
    await client.zadd(`${keyPrefix}index`, at, "plain");
    const more: AgentMessage = {
      id: "m2",
      role: "assistant",
      content: "x".repeat(PIECE_BYTES * 2),
      createdAt: at,
    };
    await storage.appendMessages("plain", [more], { updatedAt: at + 1 });
    const loaded = await storage.load("plain");
    assert.deepEqual(loaded?.messages, [message, more]);
    assert.deepEqual(loaded?.usage.entries, [entry(1)]);
    assert.equal(loaded?.updatedAt, at + 1);
  });
});
