import { MissingDependencyError, SessionError } from "../../errors.js";
import { importOptional } from "../../runtime/load.js";

/** An ioredis 5 or 6 client (`eval(script, numKeys, ...keysAndArgs)`). */
export interface IoRedisLike {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  // `stop` as a string: ioredis 6 declares ZRANGE's stop as `string | Buffer` only, so a client of that major is
  // not assignable to a method that passes a number there (ioredis 5 takes either).
  zrange(key: string, start: number, stop: string): Promise<string[]>;
  quit?(): Promise<unknown>;
}

/** A node-redis v4/v5 client (`eval(script, { keys, arguments })`). */
export interface NodeRedisLike {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  zRange(key: string, start: number, stop: number): Promise<string[]>;
  isOpen?: boolean;
  connect?(): Promise<unknown>;
  quit?(): Promise<unknown>;
  close?(): Promise<unknown>;
}

/** What Redis storage connects through: a client you own (ioredis or redis), a URL, or ioredis options. */
export type RedisSource = string | IoRedisLike | NodeRedisLike | Record<string, unknown>;

function isNodeRedis(value: unknown): value is NodeRedisLike {
  return (
    typeof (value as NodeRedisLike)?.zRange === "function" &&
    typeof (value as NodeRedisLike).eval === "function"
  );
}

function isIoRedis(value: unknown): value is IoRedisLike {
  return (
    typeof (value as IoRedisLike)?.zrange === "function" && typeof (value as IoRedisLike).eval === "function"
  );
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
}

// ioredis's client class, or undefined when it is not installed (then `redis` is tried); ioredis installed but
// failing to load is that failure, not a fallback.
async function loadIoRedis(): Promise<(new (...args: unknown[]) => IoRedisLike) | undefined> {
  try {
    const loaded = await importOptional<{ default: new (...args: unknown[]) => IoRedisLike }>(
      "ioredis",
      "RedisSessionStorage",
      () => import("ioredis"),
    );
    return loaded.default;
  } catch (error) {
    if (error instanceof MissingDependencyError && isMissing(error.cause)) return undefined;
    throw error;
  }
}

/** The two commands the storage needs (Lua scripts and ZRANGE), the same over either client library. */
export class RedisConnection {
  private constructor(
    private readonly client: IoRedisLike | NodeRedisLike,
    private readonly owned: boolean,
  ) {}

  /** Wraps a user client, or connects (ioredis first, then redis, loaded on demand) from a URL or options. */
  static async open(source: RedisSource): Promise<RedisConnection> {
    if (isNodeRedis(source) || isIoRedis(source)) return new RedisConnection(source, false);
    if (typeof source !== "string" && (typeof source !== "object" || source === null)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "Redis storage needs an ioredis/redis client, a URL or options",
        { issues: [{ path: "source", rule: "type" }] },
      );
    }
    const IoRedis = await loadIoRedis();
    if (IoRedis !== undefined) return new RedisConnection(new IoRedis(source), true);
    // A variable specifier (importOptional's default): `redis` is an optional alternative this package does not
    // depend on. Without either, the error names ioredis, the one the docs install.
    const { createClient } = await importOptional<{
      createClient: (options: Record<string, unknown>) => NodeRedisLike;
    }>("redis", "RedisSessionStorage").catch((error: unknown) => {
      throw new MissingDependencyError("ioredis", "RedisSessionStorage", error);
    });
    const client = createClient(typeof source === "string" ? { url: source } : source);
    await client.connect?.();
    return new RedisConnection(client, true);
  }

  /** Runs a Lua script atomically (one round trip); string arguments only. */
  async script(body: string, keys: string[], args: string[]): Promise<unknown> {
    if (isNodeRedis(this.client)) return this.client.eval(body, { keys, arguments: args });
    return (this.client as IoRedisLike).eval(body, keys.length, ...keys, ...args);
  }

  /** Members of a sorted set in score order. */
  async zrange(key: string): Promise<string[]> {
    if (isNodeRedis(this.client)) return this.client.zRange(key, 0, -1);
    return (this.client as IoRedisLike).zrange(key, 0, "-1");
  }

  /** Disconnects when this connection opened the client; a client passed in stays open. */
  async close(): Promise<void> {
    if (!this.owned) return;
    const client = this.client as NodeRedisLike & IoRedisLike;
    if (typeof client.quit === "function") await client.quit();
    else await client.close?.();
  }
}
