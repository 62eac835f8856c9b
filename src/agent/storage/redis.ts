import { SessionError, StorageError } from "../../errors.js";
import { assertNamedSessionId } from "../../message/ids.js";
import { assertSessionState } from "../../schema/session-state.js";
import { alreadyExists, assertAppendArgs } from "../checks.js";
import { buildState, fromJson, toJson } from "../codec.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage, UsageEntry } from "../types.js";
import { RedisConnection, type RedisSource } from "./redis-client.js";

/** Options of {@link RedisSessionStorage}. */
export interface RedisSessionStorageOptions {
  /** Prefix of every key (default "agent-session:"). */
  prefix?: string;
}

// RPUSH in chunks: Lua's unpack() has a stack limit of a few thousand values.
const PUSH = `local function push(key, first, last)
  for i = first, last, 1000 do redis.call('RPUSH', key, unpack(ARGV, i, math.min(i + 999, last))) end
end
`;

// KEYS: meta, messages, usage, index. ARGV: id, createdAt, updatedAt, metadata, parentId, nMessages, ...bodies.
// Every check comes before the first write: Redis does not roll back a script that fails part-way (ZADD of a
// createdAt that is not a number used to fail after the DEL and HSET, leaving a half-replaced, unlisted session).
const SAVE = `${PUSH}local score = tonumber(ARGV[2])
if not score or score ~= score or score == math.huge or score == -math.huge then
  return redis.error_reply('createdAt must be a finite number')
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'createdAt', ARGV[2], 'updatedAt', ARGV[3], 'metadata', ARGV[4], 'parentId', ARGV[5])
local n = tonumber(ARGV[6])
push(KEYS[2], 7, 6 + n)
push(KEYS[3], 7 + n, #ARGV)
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
return 1`;

// Same keys and arguments as SAVE; returns 0 and writes nothing when the session exists (atomic: one script).
const SAVE_CLEARS = "redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])";
if (!SAVE.includes(SAVE_CLEARS))
  throw new Error("redis.ts: SAVE no longer clears the session as CREATE expects");
const CREATE = SAVE.replace(
  SAVE_CLEARS,
  "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end\nredis.call('DEL', KEYS[2], KEYS[3])",
);

// KEYS: meta, messages, usage. ARGV: updatedAt, metadata ("" = unchanged), nMessages, ...bodies
const APPEND = `${PUSH}if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'metadata', ARGV[2]) end
local n = tonumber(ARGV[3])
push(KEYS[2], 4, 3 + n)
push(KEYS[3], 4 + n, #ARGV)
return 1`;

// KEYS: meta, messages, usage
const LOAD = `local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return false end
return {h, redis.call('LRANGE', KEYS[2], 0, -1), redis.call('LRANGE', KEYS[3], 0, -1)}`;

// KEYS: meta, messages, usage, index. ARGV: id
const DELETE = `redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1`;

/**
 * Sessions in Redis: per session a hash (times, metadata, parent) and two lists (messages, ledger), plus one sorted
 * set of ids by creation time, so `list()` never scans the keyspace with KEYS. Every operation is one Lua script:
 * atomic and one round trip; an append is RPUSH of the new items, O(new messages). Keys of one session share a
 * `{id}` hash tag; the id index lives elsewhere, so Redis Cluster is not supported.
 */
export class RedisSessionStorage implements SessionStorage {
  private readonly connecting: Promise<RedisConnection>;
  private readonly prefix: string;

  constructor(source: RedisSource, options: RedisSessionStorageOptions | string = {}) {
    this.prefix = typeof options === "string" ? options : (options.prefix ?? "agent-session:");
    if (typeof this.prefix !== "string")
      throw new SessionError("INVALID_ARGUMENT", "prefix must be a string");
    this.connecting = RedisConnection.open(source);
    // Reported by the first call that needs the connection, not as an unhandled rejection.
    this.connecting.catch(() => undefined);
  }

  private keys(sessionId: string): [string, string, string] {
    assertNamedSessionId(sessionId);
    // The suffixes never contain "}:", so splitting a key at its last "}:" recovers the id: no two ids share keys.
    const base = `${this.prefix}{${sessionId}}:`;
    return [`${base}meta`, `${base}messages`, `${base}usage`];
  }

  private get index(): string {
    return `${this.prefix}index`;
  }

  private async run<T>(action: string, body: (redis: RedisConnection) => Promise<T>): Promise<T> {
    try {
      return await body(await this.connecting);
    } catch (error) {
      if (error instanceof SessionError) throw error;
      throw new StorageError(`RedisSessionStorage could not ${action}: ${(error as Error).message}`, error);
    }
  }

  async save(state: SessionState): Promise<void> {
    await this.write(state, SAVE);
  }

  async create(state: SessionState): Promise<void> {
    const done = await this.write(state, CREATE);
    if (Number(done) !== 1) throw alreadyExists(state.id);
  }

  private write(state: SessionState, script: string): Promise<unknown> {
    // Checked whole before the script runs: Redis does not undo a script's writes when a later command fails.
    assertSessionState(state);
    const keys = this.keys(state.id);
    const messages = state.messages.map((message) => toJson(message));
    const entries = state.usage.entries.map((entry) => toJson(entry));
    const args = [
      state.id,
      String(state.createdAt),
      String(state.updatedAt),
      toJson(state.metadata),
      state.parentId ?? "",
      String(messages.length),
      ...messages,
      ...entries,
    ];
    return this.run(`save session ${state.id}`, (redis) => redis.script(script, [...keys, this.index], args));
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    const keys = this.keys(sessionId);
    const reply = await this.run(`load session ${sessionId}`, (redis) => redis.script(LOAD, keys, []));
    if (!Array.isArray(reply)) return undefined;
    const [flat, messages, entries] = reply as [string[], string[], string[]];
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
    const where = `session ${sessionId}`;
    return buildState({
      id: sessionId,
      messages: messages.map((body) => fromJson<AgentMessage>(body, `a message of ${where}`)),
      entries: entries.map((body) => fromJson<UsageEntry>(body, `a usage entry of ${where}`)),
      metadata: fromJson<Record<string, unknown>>(fields.get("metadata") ?? "{}", `the metadata of ${where}`),
      createdAt: Number(fields.get("createdAt")),
      updatedAt: Number(fields.get("updatedAt")),
      parentId: fields.get("parentId"),
    });
  }

  async delete(sessionId: string): Promise<void> {
    const keys = this.keys(sessionId);
    await this.run(`delete session ${sessionId}`, (redis) =>
      redis.script(DELETE, [...keys, this.index], [sessionId]),
    );
  }

  async list(): Promise<string[]> {
    return this.run("list sessions", (redis) => redis.zrange(this.index));
  }

  async appendMessages(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void> {
    const keys = this.keys(sessionId);
    assertAppendArgs(messages, patch);
    const bodies = messages.map((message) => toJson(message));
    const args = [
      String(patch.updatedAt),
      patch.metadata === undefined ? "" : toJson(patch.metadata),
      String(bodies.length),
      ...bodies,
      ...(patch.usage ?? []).map((entry) => toJson(entry)),
    ];
    const done = await this.run(`append to session ${sessionId}`, (redis) =>
      redis.script(APPEND, keys, args),
    );
    if (Number(done) !== 1) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
  }

  /** Disconnects when this storage opened the client from a URL or options. */
  async close(): Promise<void> {
    const redis = await this.connecting.catch(() => undefined);
    await redis?.close();
  }
}
