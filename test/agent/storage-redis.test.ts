import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Redis } from "ioredis";
import { Redis as Redis5 } from "ioredis-5";
import { RedisSessionStorage, type SessionStorage } from "../../src/agent/index.js";
import { runStorageContract } from "../../src/testing/index.js";
import { sampleMessages, sampleState } from "../../src/testing/storage/fixtures.js";
import { serverSkip } from "./helpers/servers.js";

/** node:test, injected into the contract suite as a user's runner would be. */
const runner = { describe, it };

const URL = "redis://127.0.0.1:6379";
const skip = await serverSkip("Redis", "127.0.0.1", 6379);

let counter = 0;
const prefixes = new WeakMap<SessionStorage, string>();
const prefix = () => `agent-session-test:${process.pid}:${++counter}:`;

/** Removes everything a test stored, through the storage's own API (no KEYS anywhere). */
async function wipe(storage: SessionStorage): Promise<void> {
  for (const id of await storage.list()) await storage.delete(id);
  await storage.close?.();
}

runStorageContract(runner, {
  name: "RedisSessionStorage (URL, own ioredis client)",
  skip,
  create: async () => {
    const storage = new RedisSessionStorage(URL, { prefix: prefix() });
    prefixes.set(storage, (storage as unknown as { prefix: string }).prefix);
    return storage;
  },
  destroy: wipe,
  reopen: async (storage) => new RedisSessionStorage(URL, prefixes.get(storage)!),
});

// A client the app made, on each ioredis major the peer range allows (6, the devDependency, speaks RESP3 by
// default; 5 is installed as the `ioredis-5` alias). Each client is handed over as its own major's type, so the type
// check proves both assignable to what the storage takes, and the contract that both read back the same.
const clients = new WeakMap<SessionStorage, { quit(): Promise<unknown> }>();
function withClient<C extends { quit(): Promise<unknown> }>(
  client: C,
  storage: (client: C) => SessionStorage,
) {
  const made = storage(client);
  clients.set(made, client);
  return made;
}
for (const [major, create] of [
  ["6", () => withClient(new Redis(URL), (c) => new RedisSessionStorage(c, { prefix: prefix() }))],
  ["5", () => withClient(new Redis5(URL), (c) => new RedisSessionStorage(c, { prefix: prefix() }))],
] as const) {
  runStorageContract(runner, {
    name: `RedisSessionStorage (user ioredis ${major} client)`,
    skip,
    create: async () => create(),
    destroy: async (storage) => {
      await wipe(storage);
      await clients.get(storage)!.quit();
    },
  });
}

// The `redis` (node-redis) client API, emulated over ioredis: exercises the other command-calling convention.
const nodeRedisClients = new WeakMap<SessionStorage, Redis>();
runStorageContract(runner, {
  name: "RedisSessionStorage (node-redis style client)",
  skip,
  create: async () => {
    const io = new Redis(URL);
    const client = {
      eval: (script: string, options: { keys: string[]; arguments: string[] }) =>
        io.eval(script, options.keys.length, ...options.keys, ...options.arguments),
      zRange: (key: string, start: number, stop: number) => io.zrange(key, start, String(stop)),
    };
    const storage = new RedisSessionStorage(client, { prefix: prefix() });
    nodeRedisClients.set(storage, io);
    return storage;
  },
  destroy: async (storage) => {
    await wipe(storage);
    await nodeRedisClients.get(storage)!.quit();
  },
});

describe("RedisSessionStorage specifics", { skip }, () => {
  it("ids that look like another session's keys stay separate; delete leaves no keys behind", async () => {
    const client = new Redis(URL);
    const keyPrefix = prefix();
    const storage = new RedisSessionStorage(client, keyPrefix);
    const ids = ["a", "a}:messages", "{a}", "a:meta", "x y ✓"];
    for (const id of ids) await storage.save(sampleState({ id, messages: sampleMessages(id).slice(0, 1) }));
    for (const id of ids) assert.equal((await storage.load(id))?.messages[0]?.id, `${id}1`);
    assert.deepEqual([...(await storage.list())].sort(), [...ids].sort());
    for (const id of ids) await storage.delete(id);
    // SCAN (not KEYS) in the test only, to prove nothing leaked.
    const [, left] = await client.scan(0, "MATCH", `${keyPrefix}*`, "COUNT", 1000);
    assert.deepEqual(left, []);
    await client.quit();
  });

  it("list() reads the id index rather than scanning keys", async () => {
    const client = new Redis(URL);
    const seen: string[] = [];
    const spy = new Proxy(client, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          seen.push(String(key));
          return value.apply(target, args);
        };
      },
    });
    const storage = new RedisSessionStorage(spy, prefix());
    await storage.save(sampleState());
    await storage.list();
    assert.ok(!seen.some((name) => /^(keys|scan)$/i.test(name)), `commands used: ${seen.join(", ")}`);
    await wipe(storage);
    await client.quit();
  });
});
