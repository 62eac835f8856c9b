/**
 * Kept streams (contract/streams.ts) written once for both SQL engines: the steps of each call over a statement
 * table per engine (sqlite.ts, postgres.ts beside this file). Postgres does a drop, an expiry,
 * a read (the head with its chunks, one snapshot) and an append (checked under the head's row lock) in one
 * statement each; SQLite's table answers several, run in its transaction. The key handling differs on purpose and
 * stays in each engine's {@link StreamEngine}: SQLite looks the key up in the append's transaction, Postgres before
 * its one statement, which guards the key (sql/sealing/postgres-key-guard.ts) and is sealed again when the guard refuses it.
 */
import type { StreamChunk, StreamHead, StreamRead, StreamStore } from "../../contract/streams.js";
import type { ContentKeys } from "../../store/crypto/content-keys.js";
import { type StreamHeadRow, streamHead } from "../../store/stream-rows.js";
import { openedChunk, storedChunk } from "../../store/stream-seal.js";
import { countOf, type Program, type Statement } from "../program.js";

// What a stream statement table answers: statements only (no engine call), one or several run in order. Named apart
// from program.ts's Step, which may also be an engine call.
type Statements = Statement | readonly Statement[];

/** A chunk as stored (stream-seal.ts storedChunk): sealed, or in clear with a leading `~` doubled. */
export interface StoredChunk {
  readonly seq: number;
  readonly chunk: string;
}

/** One engine's statements of kept streams (tables `agent_streams` and `agent_stream_chunks`). */
export interface StreamStatements {
  /**
   * False on Postgres, whose drop, expiry and append are one statement each (run alone; the append checks the head
   * itself under its row lock, answering `n` and the guard's `keyed`); true on SQLite, whose table answers several,
   * run in one transaction (the append checks the head first, the expiry answers the sessions to forget).
   */
  readonly several: boolean;
  /** The stream made the session's and live, and the session's chunks cleared. */
  start(sessionId: string, streamId: string, now: number): Statements;
  /** The session's head: `stream_id, state, error, updated_at`. */
  head(sessionId: string): Statement;
  /**
   * The head locked and its time moved while the stream is live, answering a row when it was; null (or absent) where
   * {@link append} checks the head itself. An append runs it first, in one transaction with {@link append}, which
   * then only writes the chunks: a Citus cluster routes no statement whose `WITH` holds an `INSERT`
   * (postgres.ts).
   */
  lock?(sessionId: string, streamId: string, now: number): Statement | null;
  /**
   * `chunks` written and the head's time moved (while the stream is live), or, with {@link lock}, the chunks alone;
   * `guard`: the key guard's parameters.
   */
  append(
    sessionId: string,
    streamId: string,
    now: number,
    chunks: readonly StoredChunk[],
    guard: readonly unknown[],
  ): Statements;
  /** The live stream ended in `state`. */
  end(
    sessionId: string,
    streamId: string,
    state: "done" | "failed",
    error: string | null,
    now: number,
  ): Statement;
  /** The head with its chunks after `afterSeq` (`seq, chunk`, null for none), or the head alone when {@link chunks}. */
  read(sessionId: string, streamId: string, afterSeq: number, limit: number): Statement;
  /** The chunks after `afterSeq`, read after the head in the same snapshot (SQLite). */
  chunks?(sessionId: string, streamId: string, afterSeq: number, limit: number): Statement;
  /** The stream and its chunks deleted. */
  drop(sessionId: string, streamId: string): Statements;
  /** Streams idle since `before`: deleted and counted (`n`), or, with {@link several}, their `session_id`s. */
  expire(before: number): Statement;
  /** A session's stream and chunks deleted (a registry delete and an erasure run it in their transaction). */
  forget(sessionId: string): Statements;
  /** The number of stored chunks (`n`). */
  countChunks(): Statement;
}

/** What an append seals with: the key (null: in clear; looked up when called) and the key guard's parameters. */
export interface ChunkSeal {
  key(): Uint8Array | null;
  readonly guard: readonly unknown[];
}

/** A stream's head and the stored chunks a read found. */
export interface KeptRead {
  readonly head: StreamHead;
  readonly chunks: readonly StoredChunk[];
}

/** How one engine runs the programs of kept streams, with its own key handling. */
export interface StreamEngine {
  readonly statements: StreamStatements;
  /** Runs a program, in one write transaction when `transaction`. */
  run<T>(program: () => Program<T>, transaction: boolean): Promise<T>;
  /** Runs a read in one snapshot, then `open`s what it found with the store's keys (if any). */
  read(
    program: Program<KeptRead | null>,
    open: (read: KeptRead, keys: ContentKeys | undefined) => StreamRead,
  ): Promise<StreamRead | null>;
  /**
   * Runs an append: `write(seal)` answers whether the chunks went in, null when the key guard refused them (nothing
   * written), which the engine seals again.
   */
  append(
    sessionId: string,
    streamId: string,
    write: (seal: ChunkSeal) => Program<boolean | null>,
  ): Promise<boolean>;
}

/** The kept streams of an SQL store: each call one statement or one transaction, so readers see whole appends. */
export class SqlStreams implements StreamStore {
  private readonly s: StreamStatements;

  constructor(private readonly engine: StreamEngine) {
    this.s = engine.statements;
  }

  async start(sessionId: string, streamId: string, now: number): Promise<void> {
    await this.engine.run(() => one(this.s.start(sessionId, streamId, now)), true);
  }

  append(sessionId: string, streamId: string, chunks: readonly StreamChunk[], now: number): Promise<boolean> {
    return this.engine.append(sessionId, streamId, (seal) =>
      appended(this.s, sessionId, streamId, chunks, now, seal),
    );
  }

  async end(sessionId: string, streamId: string, error: string | null, now: number): Promise<void> {
    const state = error === null ? "done" : "failed";
    await this.engine.run(() => one(this.s.end(sessionId, streamId, state, error, now)), false);
  }

  async head(sessionId: string): Promise<StreamHead | null> {
    const [row] = await this.engine.run(() => one(this.s.head(sessionId)), false);
    return row ? streamHead(row as unknown as StreamHeadRow) : null;
  }

  read(sessionId: string, streamId: string, afterSeq: number, limit: number): Promise<StreamRead | null> {
    return this.engine.read(read(this.s, sessionId, streamId, afterSeq, limit), (found, keys) => ({
      ...found.head,
      chunks: found.chunks.map(({ seq, chunk }) => ({
        seq,
        chunk: openedChunk(keys, sessionId, streamId, seq, chunk),
      })),
    }));
  }

  async drop(sessionId: string, streamId: string): Promise<void> {
    await this.engine.run(() => one(this.s.drop(sessionId, streamId)), this.s.several);
  }

  expire(before: number): Promise<number> {
    return this.engine.run(() => expired(this.s, before), this.s.several);
  }

  async countChunks(): Promise<number> {
    return countOf(await this.engine.run(() => one(this.s.countChunks()), false));
  }
}

/** A session's kept stream and its chunks deleted, in the caller's transaction (a session deleted or erased). */
export function* forgetStream(s: StreamStatements, sessionId: string): Program<void> {
  yield s.forget(sessionId);
}

function* one(step: Statements): Program<Record<string, unknown>[]> {
  return yield step;
}

function* appended(
  s: StreamStatements,
  sessionId: string,
  streamId: string,
  chunks: readonly StreamChunk[],
  now: number,
  seal: ChunkSeal,
): Program<boolean | null> {
  if (s.several) {
    const [head] = yield s.head(sessionId);
    if (head?.stream_id !== streamId || head.state !== "live") return false;
  }
  const lock = s.several ? null : (s.lock?.(sessionId, streamId, now) ?? null);
  if (lock) {
    if ((yield lock).length === 0) return false;
    // A heartbeat (no chunks) only moves the head's time.
    if (chunks.length === 0) return true;
  }
  // An encrypted owner's chunks are sealed as its messages are; an owner with encrypted content whose key this
  // store lacks is refused, DECRYPT_FAILED (the engine's key lookup).
  const key = seal.key();
  const stored = chunks.map(({ seq, chunk }) => ({
    seq,
    chunk: storedChunk(key, sessionId, streamId, seq, chunk),
  }));
  const rows = yield s.append(sessionId, streamId, now, stored, seal.guard);
  if (s.several || lock) return true;
  return rows[0]?.keyed === false ? null : countOf(rows) > 0;
}

function* read(
  s: StreamStatements,
  sessionId: string,
  streamId: string,
  afterSeq: number,
  limit: number,
): Program<KeptRead | null> {
  const rows = yield s.read(sessionId, streamId, afterSeq, limit);
  const [first] = rows;
  if (first?.stream_id !== streamId) return null;
  const found = s.chunks ? yield s.chunks(sessionId, streamId, afterSeq, limit) : rows;
  return {
    head: streamHead(first as unknown as StreamHeadRow),
    chunks: found.flatMap((r) =>
      r.seq === null || r.seq === undefined ? [] : [{ seq: Number(r.seq), chunk: String(r.chunk ?? "") }],
    ),
  };
}

function* expired(s: StreamStatements, before: number): Program<number> {
  const rows = yield s.expire(before);
  if (!s.several) return countOf(rows);
  for (const row of rows) yield s.forget(String(row.session_id));
  return rows.length;
}
