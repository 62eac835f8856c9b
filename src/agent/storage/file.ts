import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SessionError, StorageError } from "../../errors.js";
import { assertNamedSessionId } from "../../message/ids.js";
import { parseInput } from "../../schema/parse.js";
import { alreadyExists, assertAppendArgs, corrupt, isObject } from "../checks.js";
import { buildState, fromJson, toJson } from "../codec.js";
import type { AgentMessage, SessionPatch, SessionState, SessionStorage, UsageEntry } from "../types.js";
import { appendText, isMissing, readHead, removeFile, writeAtomic, writeExclusive } from "./file-io.js";
import { fileDirSchema, fileOptionsSchema } from "./options-schema.js";
import { assertSessionState } from "./state-schema.js";

/** Options of {@link FileSessionStorage}. */
export interface FileSessionStorageOptions {
  /** Flush every write to the device (survives power loss, not only a killed process). Default true. */
  fsync?: boolean;
  /** Fold the append log into the snapshot once it is larger than this and than the snapshot. Default 64 KiB. */
  compactLogBytes?: number;
}

/** One append as a log line. `g` ties it to the snapshot generation it extends. */
interface LogRecord {
  g: string;
  t: number;
  m?: AgentMessage[];
  u?: UsageEntry[];
  meta?: Record<string, unknown>;
}

/** The snapshot file: the state, led by the generation so an append can read it from the first bytes. */
type Snapshot = SessionState & { logGeneration: string };

// Ids become file names: letters, digits, "_", "-" and non-leading dots only, so no id can name a path outside the
// directory ("../x", "/etc/x", "a/b"), a hidden file or a temporary file.
const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
const GENERATION = /^\{"logGeneration":"([0-9a-f]+)"/;

/**
 * Throws `INVALID_ARGUMENT` unless `sessionId` is a session id (the one rule, see assertNamedSessionId) that this
 * storage can also use as a file name (SAFE_ID: at most 200 ASCII characters, no separator, no leading dot).
 * Hand-written: every append and load of this storage runs it.
 */
function assertFileNameId(sessionId: unknown): asserts sessionId is string {
  assertNamedSessionId(sessionId);
  if (!SAFE_ID.test(sessionId)) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Session id ${JSON.stringify(sessionId)} cannot be a file name: use letters, digits, "_", "-" and inner dots`,
      { issues: [{ path: "sessionId", rule: "format" }] },
    );
  }
}

/**
 * Sessions as files in one directory: `{id}.json` is an atomically replaced snapshot, `{id}.jsonl` an append-only log
 * of what was added since. An append writes one log line (O(new messages), not a rewrite of the whole session); once
 * the log outgrows the snapshot it is folded in, which keeps the amortised cost per append proportional to its size.
 * One process should write a given session at a time.
 */
export class FileSessionStorage implements SessionStorage {
  readonly dir: string;
  private readonly sync: boolean;
  private readonly compactLogBytes: number;
  private ready: Promise<unknown> | undefined;
  /** Tail of each session's write chain: a fold must not run between another append's read and its write. */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(dir: string, options: FileSessionStorageOptions = {}) {
    parseInput(fileDirSchema, dir, { path: "dir" });
    const limit = parseInput(fileOptionsSchema, options).compactLogBytes ?? 64 * 1024;
    this.dir = resolve(dir);
    this.sync = options.fsync ?? true;
    this.compactLogBytes = limit;
  }

  private paths(sessionId: string): { snapshot: string; log: string } {
    assertFileNameId(sessionId);
    return { snapshot: join(this.dir, `${sessionId}.json`), log: join(this.dir, `${sessionId}.jsonl`) };
  }

  private async ensureDir(): Promise<void> {
    this.ready ??= mkdir(this.dir, { recursive: true }).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    await this.ready;
  }

  async save(state: SessionState): Promise<void> {
    assertSessionState(state);
    const { snapshot, log } = this.paths(state.id);
    await this.guard(`save session ${state.id}`, () =>
      this.exclusive(state.id, async () => {
        await this.ensureDir();
        await this.writeSnapshot(snapshot, state);
        // The new generation already disowns every old log line; removing the log only reclaims space.
        await removeFile(log);
      }),
    );
  }

  /** Like save, but `CONFLICT` when the snapshot exists, decided by the file system (see writeExclusive). */
  async create(state: SessionState): Promise<void> {
    assertSessionState(state);
    const { snapshot } = this.paths(state.id);
    const created = await this.guard(`create session ${state.id}`, () =>
      this.exclusive(state.id, async () => {
        await this.ensureDir();
        // A log left by a deleted session of this id is disowned by the new generation; it is not removed here,
        // since it may belong to a session another process creates meanwhile.
        return writeExclusive(snapshot, this.snapshotText(state), this.sync);
      }),
    );
    if (!created) throw alreadyExists(state.id);
  }

  private async writeSnapshot(path: string, state: SessionState): Promise<void> {
    await writeAtomic(path, this.snapshotText(state), this.sync);
  }

  private snapshotText(state: SessionState): string {
    const generation = randomBytes(8).toString("hex");
    const body: Snapshot = { logGeneration: generation, ...state };
    return toJson(body);
  }

  async load(sessionId: string): Promise<SessionState | undefined> {
    const { snapshot, log } = this.paths(sessionId);
    return this.guard(`load session ${sessionId}`, () => this.read(sessionId, snapshot, log));
  }

  private async read(
    sessionId: string,
    snapshotPath: string,
    logPath: string,
  ): Promise<SessionState | undefined> {
    const text = await readOptional(snapshotPath);
    if (text === undefined) return undefined;
    const parsed: unknown = fromJson<Snapshot>(text, snapshotPath);
    // writeSnapshot always leads with the generation: anything else (`{}`, `[]`, `42`) is not a session.
    if (!isObject(parsed) || typeof parsed.logGeneration !== "string")
      throw corrupt(sessionId, `${snapshotPath} is not a session snapshot written by FileSessionStorage`);
    const { logGeneration, ...state } = parsed as unknown as Snapshot;
    const messages = Array.isArray(state.messages) ? state.messages : [];
    const entries = Array.isArray(state.usage?.entries) ? state.usage.entries : [];
    let { metadata, updatedAt } = state;
    for (const record of parseLog((await readOptional(logPath)) ?? "", logGeneration)) {
      if (record.m) messages.push(...record.m);
      if (record.u) entries.push(...record.u);
      if (record.meta) metadata = record.meta;
      updatedAt = record.t;
    }
    return buildState({ ...state, id: sessionId, messages, entries, metadata: metadata ?? {}, updatedAt });
  }

  async delete(sessionId: string): Promise<void> {
    const { snapshot, log } = this.paths(sessionId);
    await this.guard(`delete session ${sessionId}`, () =>
      this.exclusive(sessionId, async () => {
        await removeFile(snapshot);
        await removeFile(log);
      }),
    );
  }

  async list(): Promise<string[]> {
    return this.guard("list sessions", async () => {
      let names: string[];
      try {
        names = await readdir(this.dir);
      } catch (error) {
        if (isMissing(error)) return [];
        throw error;
      }
      return names
        .filter((name) => name.endsWith(".json"))
        .map((name) => name.slice(0, -".json".length))
        .filter((id) => SAFE_ID.test(id))
        .sort();
    });
  }

  /** Writes one log line; folds the log into a fresh snapshot when it has grown past the snapshot's size. */
  async appendMessages(sessionId: string, messages: AgentMessage[], patch: SessionPatch): Promise<void> {
    const { snapshot, log } = this.paths(sessionId);
    assertAppendArgs(messages, patch);
    await this.guard(`append to session ${sessionId}`, () =>
      this.exclusive(sessionId, async () => {
        const head = await readHead(snapshot, 64);
        if (!head) throw new SessionError("NOT_FOUND", `Session not found: ${sessionId}`);
        const generation = GENERATION.exec(head.head)?.[1];
        if (!generation)
          throw new StorageError(`${snapshot} is not a session snapshot written by FileSessionStorage`);
        const record: LogRecord = { g: generation, t: patch.updatedAt };
        if (messages.length > 0) record.m = messages;
        if (patch.usage?.length) record.u = patch.usage;
        if (patch.metadata !== undefined) record.meta = patch.metadata;
        // Each record starts with a newline, so a line torn by a crash never swallows the next record.
        const logSize = await appendText(log, `\n${toJson(record)}`, this.sync);
        if (logSize > this.compactLogBytes && logSize > head.size)
          await this.compact(sessionId, snapshot, log);
      }),
    );
  }

  private async compact(sessionId: string, snapshot: string, log: string): Promise<void> {
    const state = await this.read(sessionId, snapshot, log);
    if (!state) return;
    await this.writeSnapshot(snapshot, state);
    await removeFile(log);
  }

  private exclusive<T>(sessionId: string, body: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(sessionId) ?? Promise.resolve();
    const result = previous.then(body, body);
    const tail = result.catch(() => undefined);
    this.locks.set(sessionId, tail);
    void tail.then(() => {
      if (this.locks.get(sessionId) === tail) this.locks.delete(sessionId);
    });
    return result;
  }

  private async guard<T>(action: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      if (error instanceof SessionError) throw error;
      throw new StorageError(
        `FileSessionStorage could not ${action} in ${this.dir}: ${(error as Error).message}`,
        error,
      );
    }
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** The log records of one generation; a line torn by a crash (never acknowledged) is skipped. */
function parseLog(text: string, generation: string): LogRecord[] {
  const records: LogRecord[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0) continue;
    let record: LogRecord;
    try {
      record = JSON.parse(line) as LogRecord;
    } catch {
      continue;
    }
    if (record?.g === generation) records.push(record);
  }
  return records;
}
