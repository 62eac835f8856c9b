import { randomBytes } from "node:crypto";
import { SessionError, StorageError } from "../../errors.js";
import { assertNamedSessionId } from "../../message/ids.js";
import { parseInput } from "../../schema/parse.js";
import { alreadyExists, assertAppendArgs } from "../checks.js";
import { buildState, fromJson, toJson } from "../codec.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage, UsageEntry } from "../types.js";
import { redisOptionsSchema } from "./options-schema.js";
import { fromElements, toChunks, toElements } from "./redis-chunks.js";
import { RedisConnection, type RedisSource } from "./redis-client.js";
import { loadStored } from "./redis-load.js";
import { APPEND, COMMIT, DELETE, DISCARD, PUSH_CHUNK } from "./redis-scripts.js";
import { assertSessionState } from "./state-schema.js";

/** Options of {@link RedisSessionStorage}. */
export interface RedisSessionStorageOptions {
  /** Prefix of every key (default "agent-session:"). */
  prefix?: string;
}

/** Lifetime of a save's temporary lists, renewed by every chunk: what a writer that died leaves behind expires. */
const TEMP_TTL_MS = 10 * 60 * 1000;

/** List elements of bodies, long bodies as several pieces. */
function elementsOf(values: unknown[]): string[] {
  const elements: string[] = [];
  for (const value of values) toElements(toJson(value), elements);
  return elements;
}

/**
 * Sessions in Redis: per session a hash (times, metadata, parent, `gen`) and two lists (messages,
 * ledger; a body over 64 KiB as several elements), plus one sorted set of ids by creation time, so `list()` never
 * scans the keyspace with KEYS. No script handles more than about one chunk (1 MiB or 1,000 elements, see
 * redis-chunks.ts), since Redis serves no other client while one runs: a large save is pushed in chunks into
 * temporary lists and made visible by one O(1) commit script; a large load reads chunks that check the session
 * was not replaced meanwhile. An append is one script, RPUSH of the new items, O(new messages). Keys of one
 * session share a `{id}` hash tag; the id index lives elsewhere, so Redis Cluster is not supported.
 */
export class RedisSessionStorage implements SessionStorage {
  private readonly connecting: Promise<RedisConnection>;
  private readonly prefix: string;

  constructor(source: RedisSource, options: RedisSessionStorageOptions | string = {}) {
    this.prefix =
      typeof options === "string"
        ? options
        : (parseInput(redisOptionsSchema, options).prefix ?? "agent-session:");
    this.connecting = RedisConnection.open(source);
    // Reported by the first call that needs the connection, not as an unhandled rejection.
    this.connecting.catch(() => undefined);
  }

  private keys(sessionId: string): [string, string, string] {
    assertNamedSessionId(sessionId);
    // The suffixes never contain "}:", so splitting a key at its last "}:" recovers the id: no two ids share keys
    // (a save's temporary lists end in "}:tmp:<hex>:messages", which no session's keys do).
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
    await this.write(state, false);
  }

  async create(state: SessionState): Promise<void> {
    if (!(await this.write(state, true))) throw alreadyExists(state.id);
  }

  /** Writes a whole state; false when `create` found the session stored (then nothing visible was written). */
  private write(state: SessionState, create: boolean): Promise<boolean> {
    // Checked whole before the first script: Redis does not undo a script's writes when a later command fails.
    assertSessionState(state);
    const keys = this.keys(state.id);
    const messages = elementsOf(state.messages);
    const usage = elementsOf(state.usage.entries);
    const chunks = toChunks(messages, usage);
    const last = chunks.pop()!;
    const base = `${this.prefix}{${state.id}}:tmp:${randomBytes(12).toString("hex")}:`;
    const temp = [`${base}messages`, `${base}usage`];
    const flag = create ? "1" : "0";
    return this.run(`save session ${state.id}`, async (redis) => {
      try {
        for (const chunk of chunks) {
          const args = [
            flag,
            String(TEMP_TTL_MS),
            String(chunk.messages.length),
            ...chunk.messages,
            ...chunk.usage,
          ];
          if (Number(await redis.script(PUSH_CHUNK, [keys[0], ...temp], args)) !== 1) {
            await redis.script(DISCARD, temp, []);
            return false;
          }
        }
        const header = [state.id, String(state.createdAt), String(state.updatedAt), toJson(state.metadata)];
        const args = [...header, state.parentId ?? "", randomBytes(12).toString("hex"), flag];
        const counts = [String(messages.length), String(usage.length), String(last.messages.length)];
        const done = await redis.script(
          COMMIT,
          [...keys, this.index, ...temp],
          [...args, ...counts, ...last.messages, ...last.usage],
        );
        return Number(done) === 1;
      } catch (error) {
        // Also after a one-script save: a script that fails part-way (out of memory) keeps what it pushed.
        await this.discard(redis, temp, error);
        throw error;
      }
    });
  }

  /** Removes a failed save's temporary lists; when that fails too, both failures are reported. */
  private async discard(redis: RedisConnection, temp: string[], cause: unknown): Promise<void> {
    try {
      await redis.script(DISCARD, temp, []);
    } catch (error) {
      throw new StorageError(
        `RedisSessionStorage could not save: ${(cause as Error).message}; its temporary lists could not be ` +
          `removed (${(error as Error).message}) and expire within ${TEMP_TTL_MS / 60_000} minutes`,
        cause,
      );
    }
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    const keys = this.keys(sessionId);
    const stored = await this.run(`load session ${sessionId}`, (redis) => loadStored(redis, keys, sessionId));
    if (stored === undefined) return undefined;
    const { fields } = stored;
    const where = `session ${sessionId}`;
    return buildState({
      id: sessionId,
      messages: fromElements(stored.messages, where).map((body) =>
        fromJson<AgentMessage>(body, `a message of ${where}`),
      ),
      entries: fromElements(stored.usage, where).map((body) =>
        fromJson<UsageEntry>(body, `a usage entry of ${where}`),
      ),
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
    const bodies = elementsOf(messages);
    const args = [
      String(patch.updatedAt),
      patch.metadata === undefined ? "" : toJson(patch.metadata),
      String(bodies.length),
      ...bodies,
      ...elementsOf(patch.usage ?? []),
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
