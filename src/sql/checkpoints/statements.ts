/**
 * The statements and engine hooks checkpoints run on (steps.ts runs them): each engine's statement table
 * (sqlite.ts, postgres.ts) and its key handling (sqlite-store.ts, postgres-store.ts).
 */
import type {
  CheckpointPageQuery,
  OwnerExpectation,
  StoredCheckpoint,
  StoredWrite,
} from "../../contract/checkpoints.js";
import type { CodecKeys } from "../../store/crypto/row-codec.js";
import type { Program, Row, Statement } from "../program.js";
import type { ValuePlan } from "./delta.js";
import type { RefUpdate } from "./ref-memory.js";
import type { StoredBytes } from "./sealing.js";
import type { ValueRefRow, ValueRow } from "./stored-rows.js";
import type { RefForm } from "./write-refs.js";

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
   * nothing unless `guard`'s `gv.go`; answers `keyed`, `registered` and `lost` (deltas whose base row is gone); `refs`
   * and `inputs` turned into references to the value rows it inserted, as {@link refWrite} and {@link refValue}.
   */
  putAll?(
    c: StoredCheckpoint,
    data: StoredBytes,
    metadata: StoredBytes,
    values: readonly ValueRow[],
    refs: readonly RefUpdate[],
    inputs: readonly ValueRefRow[],
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
  /**
   * A write row turned into a reference (write-refs.ts) while it holds the stored tag and bytes `u` names and the
   * value row `u` names is there with its tag.
   */
  refWrite(sessionId: string, ns: string, u: RefUpdate): Statement;
  /**
   * An input row turned into a reference (value-refs.ts) while it holds `r.tag` and is not one yet, and the row it
   * names is there with its tag.
   */
  refValue(sessionId: string, ns: string, r: ValueRefRow): Statement;
  /** The checkpoint row `id` (null: the newest id) of a session's namespace. */
  checkpoint(sessionId: string, ns: string, id: string | null): Statement;
  /** A page of checkpoint rows, newest id first (then session and namespace, descending). */
  page(q: CheckpointPageQuery): Statement;
  /** How many ids one `writes` may name (SQLite binds one each: a Durable Object allows 100 parameters). */
  readonly idsPerRead: number;
  /** The pending writes of the checkpoints `ids` of a session's namespace. */
  writes(sessionId: string, ns: string, ids: readonly string[]): Statement;
  /**
   * Every value row on the chains of `wanted` (`[channel, version, tag]`), in one recursive read; a chain stops at
   * its first row when that row's tag is the one given (the reader holds its bytes; null: none held).
   */
  chain(
    sessionId: string,
    ns: string,
    wanted: readonly (readonly [string, string, string | null])[],
  ): Statement;
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
