/**
 * The contract between the workloads and the storage implementations under test, and the registry
 * that loads each implementation by name (failures are reported and the target skipped).
 */
import type { BenchMessage, StoreRow } from "./data.js";

/**
 * One storage implementation under test. A fresh object is made (through its factory) for every
 * SQLite file the harness opens; session ids are always `s<integer>`, message ids strings.
 */
export interface BenchTarget {
  /** Column name in the result tables. */
  readonly name: string;
  /**
   * When set, the big store this target builds is kept under `.bench-data/` and reused by later runs
   * while the value stays the same; bump it whenever the schema or the write path changes.
   */
  readonly cacheVersion?: string;
  /** Opens or creates the store in `file` with WAL, synchronous=NORMAL, busy_timeout 5000, 4 KiB pages. */
  open(file: string): Promise<void> | void;
  /**
   * Appends one message as one durable write transaction: to the session's latest leaf when
   * `parentId` is undefined, as a new root when null, else under that message.
   */
  append(sessionId: string, message: BenchMessage, parentId?: string | null): Promise<void>;
  /** Returns the session's active branch (root → latest leaf) as parsed messages. */
  history(sessionId: string): Promise<unknown[]>;
  /** Returns the session's latest leaf message; `cold` = through a freshly made session object. */
  latestLeaf(sessionId: string, cold: boolean): Promise<unknown>;
  /** Full-text search, ranked, at most 20 hits: inside one session, or across all sessions. */
  search(query: string, sessionId?: string): Promise<unknown[]>;
  /** Closes the store (checkpointing the WAL). */
  close(): Promise<void> | void;
  /**
   * Optional fast bulk path for building stores: must leave the same observable state as appending
   * the rows in order with their parentId (floor and reference also merge their FTS index into one
   * segment at the end, as a bulk import would). Without it the harness calls `append` row by row.
   */
  bulkLoad?(rows: Iterable<StoreRow>): Promise<void> | void;
}

/** Thrown by a workload or a target when an operation would exceed the time budget; the message is reported. */
export class OverBudget extends Error {}

/** Makes a fresh, unopened target object. */
export type TargetFactory = () => BenchTarget;

/** What a target module exports: `load()` resolves its dependencies once and returns the factory. */
export interface TargetModule {
  load(): Promise<TargetFactory>;
}

/** Target names the harness knows, in report column order, with the module implementing each. */
export const TARGET_MODULES: Record<string, string> = {
  floor: "./floor.js",
  reference: "./reference.js",
  // ── agent-session SLOT ──────────────────────────────────────────────────────────────────────
  // Add bench/agent-session.ts exporting `async function load(): Promise<TargetFactory>` whose
  // targets implement BenchTarget over agent-session's SQLite store (name "agent-session"; give
  // it `bulkLoad` + `cacheVersion` so the 1M-message store is built fast and only once). Until
  // that file exists the run reports "agent-session: skipped (cannot load …)" and goes on.
  "agent-session": "./agent-session.js",
};

/** Result of trying to load one target module. */
export type LoadedTarget = { name: string; factory: TargetFactory } | { name: string; error: string };

/** Loads the named target's module and factory; never throws, returns the error message instead. */
export async function loadTarget(name: string): Promise<LoadedTarget> {
  const spec = TARGET_MODULES[name];
  if (spec === undefined)
    return { name, error: `unknown target (known: ${Object.keys(TARGET_MODULES).join(", ")})` };
  try {
    const mod = (await import(spec)) as Partial<TargetModule>;
    if (typeof mod.load !== "function") return { name, error: `${spec} does not export load()` };
    return { name, factory: await mod.load() };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return { name, error: `cannot load ${spec}: ${msg.split("\n")[0]}` };
  }
}
