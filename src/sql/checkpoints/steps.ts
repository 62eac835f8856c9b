/**
 * A graph runtime's checkpoints (contract/checkpoints.ts, LangGraph's through agent-session/langgraph) written once
 * for both SQL engines: three tables tied to the session (a LangGraph thread is a session), `agent_checkpoints`,
 * `agent_checkpoint_values` (a channel's value per version, full or a delta of an earlier version: delta.ts) and
 * `agent_checkpoint_writes` (pending writes). Every byte column is sealed for an encrypted owner (the room's
 * `CHECKPOINT` kind, sealing.ts, bound to the row's key); the tables go with the session's delete and erasure
 * (sql/erase/). The statement text is each engine's table (sqlite.ts, postgres.ts); the key lookup and its guard
 * are each engine's (sqlite-store.ts, postgres-store.ts).
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
import { countOf, type Program, type Row } from "../program.js";
import { planValue, ValueCache } from "./delta.js";
import { around, type Found, openReads } from "./reads.js";
import {
  PendingValues,
  prepareWrites,
  RecentWrites,
  type RefUpdate,
  refUpdates,
  WriteRows,
} from "./ref-memory.js";
import { rowId, storedBytes } from "./sealing.js";
import type { CheckpointEngine, CheckpointStatements } from "./statements.js";
import { type Planned, packedCheckpoint, valueRefRows, valueRows } from "./stored-rows.js";
import { INPUT_CHANNEL, inputRef, type ValueRefUpdate } from "./value-refs.js";

export type { CheckpointEngine, CheckpointStatements, StatementGuard } from "./statements.js";
export type { ValueRow } from "./stored-rows.js";

// A random tag per value row (delta.ts): 12 hex digits.
const newTag = () => Math.random().toString(16).slice(2, 8) + Date.now().toString(16).slice(-6);

/** The checkpoints of an SQL store (contract/checkpoints.ts) over an engine's statements and key handling. */
export class SqlCheckpoints implements CheckpointStore {
  private readonly s: CheckpointStatements;
  private readonly cache = new ValueCache();
  private readonly pending = new PendingValues();
  private readonly recent = new RecentWrites();

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
    // The parent's writes one of these values holds go as references to it (write-refs.ts), and so does the input
    // row this process knows (value-refs.ts).
    const inputs = this.inputRefs(c, planned);
    const done = this.putPlanned(c, planned, refUpdates(this.recent, c, planned), inputs, expect);
    // A pending write of this checkpoint may refer to one of these values meanwhile (write-refs.ts).
    const offered = planned.flatMap(({ v, tag }) =>
      v.data ? [{ channel: v.channel, version: v.version, tag, bytes: v.data }] : [],
    );
    this.pending.offer(c.sessionId, c.ns, offered, done);
    await done;
  }

  // The input row this process knows as a reference to one of a put's rows, if one holds it (tried once a row).
  private inputRefs(c: StoredCheckpoint, planned: readonly Planned[]): ValueRefUpdate[] {
    const input = this.cache.get(c.sessionId, c.ns, INPUT_CHANNEL);
    const stored = input?.stored;
    if (!input || !stored) return [];
    input.stored = undefined;
    const rows = planned.flatMap(({ v, tag, plan }) =>
      plan && v.data && v.channel !== INPUT_CHANNEL
        ? [{ channel: v.channel, version: v.version, tag, stored: plan.data }]
        : [],
    );
    const update = inputRef({ ...input, ...stored, stored: stored.bytes }, rows);
    return update ? [update] : [];
  }

  private async putPlanned(
    c: StoredCheckpoint,
    planned: Planned[],
    updates: readonly RefUpdate[],
    inputs: readonly ValueRefUpdate[],
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
    for (let rows = planned, refs = inputs; putAll && single; ) {
      const at = rows;
      const inputRows = refs;
      const row = await single(
        c.sessionId,
        (key, guard) => {
          const stored = cp(key);
          const values = valueRows(c, at, key);
          const input = valueRefRows(c, inputRows, key);
          return putAll(packed, stored.data, stored.metadata, values, updates, input, guard);
        },
        expect,
      );
      if (row === undefined) break; // the engine runs programs only (a cluster)
      if (Number(row.lost ?? 0) === 0 || rows.every((r) => r.plan === null || r.plan.base === null)) {
        this.remember(c, rows);
        return;
      }
      rows = rows.map((r) => (r.plan && r.v.data ? { ...r, plan: planValue(r.v.data, undefined) } : r));
      // The input's reference named a place in a row now written otherwise.
      refs = [];
    }
    await this.engine.write(
      c.sessionId,
      function* (key) {
        // The channels whose row went in as planned: the input's reference names a place in one.
        const asPlanned = new Set<string>();
        for (const row of valueRows(c, planned, key)) {
          const rows = yield s.putValue(c.sessionId, c.ns, row.meta, row.plan, row.data);
          // A delta whose base is gone (or another version stored meanwhile) goes in full; a stored version stays.
          if (rows.length === 0 && row.plan.base !== null && row.full) {
            const full = row.full();
            yield s.putValue(c.sessionId, c.ns, full.meta, full.plan, full.data);
          } else asPlanned.add(row.meta.channel);
        }
        const stored = cp(key);
        yield s.putCheckpoint(packed, stored.data, stored.metadata);
        for (const u of updates) yield s.refWrite(c.sessionId, c.ns, u);
        for (const r of valueRefRows(c, inputs, key))
          if (asPlanned.has(r.ref.channel)) yield s.refValue(c.sessionId, c.ns, r);
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
    // A write held by a value this process knows may go as a reference to it (write-refs.ts).
    const writes = prepareWrites(this.cache, this.pending, sessionId, ns, given);
    // A value still being written: its put first, so the reference finds its row (else the write goes full).
    for (const w of writes) if (w.wait) await w.wait.catch(() => undefined);
    const rows = new WriteRows(sessionId, ns, checkpointId);
    const stored = (key: Uint8Array | null, list = writes) => rows.stored(key, list);
    const written = () => rows.written(this.recent);
    const putWritesAll = s.putWritesAll?.bind(s);
    const single = this.engine.single?.bind(this.engine);
    if (putWritesAll && single && writes.length > 0) {
      // One statement touches a row once: of writes under one (task, idx), the one the statements in turn would
      // leave (the last when replacing, else the first).
      const left = new Map<string, StoredWrite>();
      for (const w of replace ? writes : [...writes].reverse()) left.set(`${w.taskId} ${w.idx}`, w);
      const kept = writes.filter((w) => left.get(`${w.taskId} ${w.idx}`) === w);
      const row = await single(
        sessionId,
        (key, guard) => putWritesAll(sessionId, ns, checkpointId, stored(key, kept), replace, guard),
        expect,
      );
      if (row !== undefined) return written();
    }
    await this.engine.write(
      sessionId,
      function* (key) {
        for (const { w, data, ref } of stored(key))
          yield s.putWrite(sessionId, ns, checkpointId, w, data, replace, ref);
      },
      expect,
    );
    written();
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
          // As planned: a row that went in otherwise (a delta in full) is told apart by its base and prefix.
          stored:
            v.channel === INPUT_CHANNEL
              ? { type: v.type, bytes: plan.data, base: plan.base, prefix: plan.prefix }
              : undefined,
        });
    }
  }

  async get(sessionId: string, ns: string, id: string | null): Promise<CheckpointRead | null> {
    const s = this.s;
    const cache = this.cache;
    const [read] = await this.engine.read(
      (function* (): Program<Found> {
        const rows = yield s.checkpoint(sessionId, ns, id);
        return yield* around(s, rows, cache);
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
