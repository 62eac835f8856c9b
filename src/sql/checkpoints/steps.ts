/**
 * A graph runtime's checkpoints (contract/checkpoints.ts, LangGraph's through agent-session/langgraph) written once
 * for both SQL engines: three tables tied to the session (a LangGraph thread is a session), `agent_checkpoints`,
 * `agent_checkpoint_values` (a channel's value per version, full or a delta of an earlier version: delta.ts) and
 * `agent_checkpoint_writes` (pending writes). Every byte column is sealed for an encrypted owner (the row codec's
 * `checkpoint` kind, bound to the row's key); the tables go with the session's delete and erasure (sql/erase/). The
 * statement text is each engine's table (sqlite.ts, postgres.ts); the key lookup and its guard are each engine's
 * (sqlite/checkpoints.ts, postgres/checkpoints.ts).
 */
import type {
  CheckpointPageQuery,
  CheckpointRead,
  CheckpointStore,
  OwnerExpectation,
  StoredChannelValue,
  StoredCheckpoint,
  StoredWrite,
} from "../../contract/checkpoints.js";
import type { CodecKeys } from "../../store/crypto/row-codec.js";
import { countOf, type Program, type Row, type Statement } from "../program.js";
import { planValue, ValueCache, type ValuePlan } from "./delta.js";
import { pack } from "./packing.js";
import { type Found, openReads, versionsOf } from "./reads.js";
import { rowId, type StoredBytes, storedBytes } from "./sealing.js";
import { type Planned, packedCheckpoint, type ValueRow, valueRows } from "./stored-rows.js";
import { findRef, NO_BYTES, PendingValues, parseRef, type RefForm, refType } from "./write-refs.js";

export type { ValueRow } from "./stored-rows.js";

/** One engine's statements of checkpoints; every statement but a page across sessions names its session. */
export interface CheckpointStatements {
  /** The checkpoint row inserted or replaced. */
  putCheckpoint(c: StoredCheckpoint, data: StoredBytes, metadata: StoredBytes): Statement;
  /**
   * A value row inserted unless its version is stored (`RETURNING 1 AS put`); a delta only while its base row is
   * there with `plan.baseTag`.
   */
  putValue(
    sessionId: string,
    ns: string,
    v: { channel: string; version: string; type: string; tag: string },
    plan: ValuePlan,
    data: StoredBytes | null,
  ): Statement;
  /**
   * A pending write inserted; one stored under its (task, idx) kept, or replaced when `replace`; in its `ref` form
   * while that form's value row is there with its tag (write-refs.ts).
   */
  putWrite(
    sessionId: string,
    ns: string,
    checkpointId: string,
    w: StoredWrite,
    data: StoredBytes,
    replace: boolean,
    ref?: RefForm,
  ): Statement;
  /**
   * Where the engine writes in one statement ({@link CheckpointEngine.single}): the checkpoint row and its values,
   * nothing unless `guard`'s `gv.go`; answers `keyed`, `registered` and `lost` (deltas whose base row is gone).
   */
  putAll?(
    c: StoredCheckpoint,
    data: StoredBytes,
    metadata: StoredBytes,
    values: readonly ValueRow[],
    guard: StatementGuard,
  ): Statement;
  /** The same for pending writes (each (task, idx) once): answers `keyed` and `registered`. */
  putWritesAll?(
    sessionId: string,
    ns: string,
    checkpointId: string,
    writes: readonly { w: StoredWrite; data: StoredBytes; ref?: RefForm | undefined }[],
    replace: boolean,
    guard: StatementGuard,
  ): Statement;
  /** The checkpoint row `id` (null: the newest id) of a session's namespace. */
  checkpoint(sessionId: string, ns: string, id: string | null): Statement;
  /** A page of checkpoint rows, newest id first (then session and namespace, descending). */
  page(q: CheckpointPageQuery): Statement;
  /** The pending writes of the checkpoints `ids` of a session's namespace. */
  writes(sessionId: string, ns: string, ids: readonly string[]): Statement;
  /** Every value row on the chains of `wanted` (`[channel, version]` pairs), in one recursive read. */
  chain(sessionId: string, ns: string, wanted: readonly (readonly [string, string])[]): Statement;
  /** A session's checkpoint rows (`n`) and stored bytes (`bytes`), over the three tables. */
  footprint(sessionId: string): Statement;
  /** The distinct namespaces (`ns`) of a session's checkpoints, in order (along the primary key). */
  namespaces(sessionId: string): Statement;
}

/** How an engine runs the programs, with its key handling. */
export interface CheckpointEngine {
  readonly statements: CheckpointStatements;
  /** Runs a write in one transaction, with the key of the session's owner (null: in clear), guarded as a message's. */
  write(
    sessionId: string,
    program: (key: Uint8Array | null) => Program<void>,
    expect?: OwnerExpectation,
  ): Promise<void>;
  /**
   * Runs a write as one statement `build` makes (no transaction around it: one round trip), with the key of the
   * session's owner and the guard to splice in; answers its row, or undefined with nothing done where it cannot (a
   * cluster, whose guard is a statement of its own): {@link write} then.
   */
  single?(
    sessionId: string,
    build: (key: Uint8Array | null, guard: StatementGuard) => Statement,
    expect?: OwnerExpectation,
  ): Promise<Row | undefined>;
  /** Whether {@link write} checks an {@link OwnerExpectation} (contract/checkpoints.ts `checksOwner`). */
  readonly checksOwner?: boolean;
  /** Runs a read in one snapshot, then `open`s what it found with the store's keys (if any). */
  read<T, R>(program: Program<T>, open: (found: T, keys: CodecKeys | undefined) => R): Promise<R>;
}

/**
 * The guard a one-statement write splices in, its parameters numbered from `at`: CTEs (each followed by a comma)
 * that define `gv(go, keyed, registered)`, where `go` is whether the write may happen (its key check still the
 * owner's, the session still the expected owner's), and the parameters they read.
 */
export type StatementGuard = (at: number) => { ctes: string; params: readonly unknown[] };

// A random tag per value row (delta.ts): 12 hex digits.
const newTag = () => Math.random().toString(16).slice(2, 8) + Date.now().toString(16).slice(-6);

const group = (sessionId: string, ns: string) => JSON.stringify([sessionId, ns]);

/** The checkpoints of an SQL store (contract/checkpoints.ts) over an engine's statements and key handling. */
export class SqlCheckpoints implements CheckpointStore {
  private readonly s: CheckpointStatements;
  private readonly cache = new ValueCache();
  private readonly pending = new PendingValues();

  constructor(private readonly engine: CheckpointEngine) {
    this.s = engine.statements;
  }

  get checksOwner(): boolean {
    return this.engine.checksOwner === true;
  }

  async put(
    c: StoredCheckpoint,
    values: readonly StoredChannelValue[],
    expect?: OwnerExpectation,
  ): Promise<void> {
    const cache = this.cache;
    const planned = values.map((v) => {
      const known = v.data === null ? undefined : cache.get(c.sessionId, c.ns, v.channel);
      return { v, tag: newTag(), plan: v.data === null ? null : planValue(v.data, known) };
    });
    const done = this.putPlanned(c, planned, expect);
    // A pending write of this checkpoint may refer to one of these values meanwhile (write-refs.ts).
    const offered = planned.flatMap(({ v, tag }) =>
      v.data ? [{ channel: v.channel, version: v.version, tag, bytes: v.data }] : [],
    );
    this.pending.offer(c.sessionId, c.ns, offered, done);
    await done;
  }

  private async putPlanned(
    c: StoredCheckpoint,
    planned: Planned[],
    expect?: OwnerExpectation,
  ): Promise<void> {
    const s = this.s;
    const packed = packedCheckpoint(c);
    const cp = (key: Uint8Array | null) => ({
      data: storedBytes(key, c.sessionId, rowId("c", c.ns, c.id), packed.data),
      metadata: storedBytes(key, c.sessionId, rowId("m", c.ns, c.id), packed.metadata),
    });
    const putAll = s.putAll?.bind(s);
    const single = this.engine.single?.bind(this.engine);
    // One statement where the engine runs one; a delta whose base is gone (another process deleted the thread)
    // writes nothing, and the write goes again with every value full.
    for (let rows = planned; putAll && single; ) {
      const at = rows;
      const row = await single(
        c.sessionId,
        (key, guard) => {
          const stored = cp(key);
          return putAll(packed, stored.data, stored.metadata, valueRows(c, at, key), guard);
        },
        expect,
      );
      if (row === undefined) break; // the engine runs programs only (a cluster)
      if (Number(row.lost ?? 0) === 0 || rows.every((r) => r.plan === null || r.plan.base === null)) {
        this.remember(c, rows);
        return;
      }
      rows = rows.map((r) => (r.plan && r.v.data ? { ...r, plan: planValue(r.v.data, undefined) } : r));
    }
    await this.engine.write(
      c.sessionId,
      function* (key) {
        for (const row of valueRows(c, planned, key)) {
          const rows = yield s.putValue(c.sessionId, c.ns, row.meta, row.plan, row.data);
          // A delta whose base is gone (or another version stored meanwhile) goes in full; a stored version stays.
          if (rows.length === 0 && row.plan.base !== null && row.full) {
            const full = row.full();
            yield s.putValue(c.sessionId, c.ns, full.meta, full.plan, full.data);
          }
        }
        const stored = cp(key);
        yield s.putCheckpoint(packed, stored.data, stored.metadata);
      },
      expect,
    );
    this.remember(c, planned);
  }

  async putWrites(
    sessionId: string,
    ns: string,
    checkpointId: string,
    given: readonly StoredWrite[],
    replace: boolean,
    expect?: OwnerExpectation,
  ): Promise<void> {
    const s = this.s;
    const cache = this.cache;
    // A write held by a value this process knows may go as a reference to it (write-refs.ts).
    const writes = given.map((w) => {
      const ref = findRef(cache, this.pending, sessionId, ns, w.data);
      const form = ref && {
        channel: ref.channel,
        version: ref.version,
        tag: ref.tag,
        type: refType(w.type, ref),
      };
      return { ...w, ...pack(w.type, w.data), ref: form, wait: ref?.wait };
    });
    // A value still being written: its put first, so the reference finds its row (else the write goes full).
    for (const w of writes) if (w.wait) await w.wait.catch(() => undefined);
    const stored = (key: Uint8Array | null, list = writes) =>
      list.map((w) => {
        const id = rowId("w", ns, checkpointId, w.taskId, w.idx);
        const data = storedBytes(key, sessionId, id, w.data);
        return {
          w,
          data,
          // No bytes to seal: the reference (in its tag) is all the row holds.
          ref: w.ref ? { ...w.ref, data: { data: NO_BYTES, sealed: false } } : undefined,
        };
      });
    const putWritesAll = s.putWritesAll?.bind(s);
    const single = this.engine.single?.bind(this.engine);
    if (putWritesAll && single && writes.length > 0) {
      // One statement touches a row once: of writes under one (task, idx), the one the statements in turn would
      // leave (the last when replacing, else the first).
      const last = new Map<string, StoredWrite>();
      for (const w of replace ? writes : [...writes].reverse()) last.set(`${w.taskId} ${w.idx}`, w);
      const kept = writes.filter((w) => last.get(`${w.taskId} ${w.idx}`) === w);
      const row = await single(
        sessionId,
        (key, guard) => putWritesAll(sessionId, ns, checkpointId, stored(key, kept), replace, guard),
        expect,
      );
      if (row !== undefined) return;
    }
    await this.engine.write(
      sessionId,
      function* (key) {
        for (const { w, data, ref } of stored(key))
          yield s.putWrite(sessionId, ns, checkpointId, w, data, replace, ref);
      },
      expect,
    );
  }

  // The values written, as the bases of this process's next deltas.
  private remember(c: StoredCheckpoint, planned: readonly Planned[]): void {
    for (const { v, tag, plan } of planned) {
      if (v.data && plan)
        this.cache.set(c.sessionId, c.ns, v.channel, {
          version: v.version,
          tag,
          bytes: v.data,
          depth: plan.depth,
          chain: plan.chain,
        });
    }
  }

  async get(sessionId: string, ns: string, id: string | null): Promise<CheckpointRead | null> {
    const s = this.s;
    const [read] = await this.engine.read(
      (function* (): Program<Found> {
        const rows = yield s.checkpoint(sessionId, ns, id);
        return yield* around(s, rows);
      })(),
      (found, keys) => openReads(found, keys, this.cache),
    );
    return read ?? null;
  }

  async page(q: CheckpointPageQuery): Promise<CheckpointRead[]> {
    const s = this.s;
    return this.engine.read(
      (function* (): Program<Found> {
        const rows = yield s.page(q);
        return yield* around(s, rows);
      })(),
      (found, keys) => openReads(found, keys, undefined),
    );
  }

  async namespaces(sessionId: string): Promise<string[]> {
    const s = this.s;
    return this.engine.read(
      (function* (): Program<Row[]> {
        return yield s.namespaces(sessionId);
      })(),
      (rows) => rows.map((row) => String(row.ns)),
    );
  }

  async footprint(sessionId: string): Promise<{ rows: number; bytes: number }> {
    const s = this.s;
    return this.engine.read(
      (function* (): Program<Row[]> {
        return yield s.footprint(sessionId);
      })(),
      (rows) => ({ rows: countOf(rows), bytes: Number(rows[0]?.bytes ?? 0) }),
    );
  }
}

// The values and writes of the checkpoint rows found: one chain read and one writes read per session and namespace.
export function* around(s: CheckpointStatements, rows: Row[]): Program<Found> {
  type Group = { sessionId: string; ns: string; ids: string[]; wanted: Map<string, [string, string]> };
  const groups = new Map<string, Group>();
  for (const r of rows) {
    const sessionId = String(r.session_id);
    const ns = String(r.ns);
    const g = group(sessionId, ns);
    const at: Group = groups.get(g) ?? { sessionId, ns, ids: [], wanted: new Map() };
    groups.set(g, at);
    at.ids.push(String(r.id));
    for (const [channel, named] of Object.entries(versionsOf(r))) {
      const version = String(named);
      at.wanted.set(JSON.stringify([channel, version]), [channel, version]);
    }
  }
  const chains = new Map<string, Row[]>();
  const writes = new Map<string, Row[]>();
  for (const [g, at] of groups) {
    // The writes first: the values a write refers to (write-refs.ts) join the chain read.
    for (const w of yield s.writes(at.sessionId, at.ns, at.ids)) {
      const key = JSON.stringify([at.sessionId, at.ns, String(w.checkpoint_id)]);
      const list = writes.get(key);
      if (list) list.push(w);
      else writes.set(key, [w]);
      const ref = parseRef(String(w.type));
      if (ref) at.wanted.set(JSON.stringify([ref.channel, ref.version]), [ref.channel, ref.version]);
    }
    chains.set(g, at.wanted.size === 0 ? [] : yield s.chain(at.sessionId, at.ns, [...at.wanted.values()]));
  }
  return { rows, chains, writes };
}
