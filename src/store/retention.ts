/**
 * Retention: a policy (how long a session may stay inactive, how many of an owner's newest to keep whatever their
 * age) and the sweep that applies it in batches. Each session is erased under the condition it was selected by,
 * re-checked in the erasing transaction (store/erasure.ts), so many sweepers may run at once: a session one of
 * them erased is nothing to the others, one written to or pinned since it was selected stays, and on Postgres a
 * session another transaction holds is skipped rather than waited for.
 */

import { z } from "zod";
import type { SessionInfo, SessionRegistry } from "../contract/registry.js";
import { parseInput } from "../schema/parse.js";
import { numberWhere } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import {
  addCounts,
  type ErasureCondition,
  type ErasureCounts,
  type ErasureReceipt,
  emptyReceipt,
} from "./erasure.js";
import { parseOwner } from "./owner.js";
import { stripUndefined } from "./registry-schema.js";

/** What a retention sweep erases: sessions inactive for longer than `maxAgeMs`, pinned ones never. */
export interface RetentionPolicy {
  /** Erase a session whose last activity (`updated_at`) is more than this many milliseconds ago. */
  maxAgeMs: number;
  /** Keep each owner's newest `n` sessions (by last activity) whatever their age; sessions without an owner are not counted. */
  keepNewestPerOwner?: number | undefined;
}

/** Progress of a sweep, reported after each batch. */
export interface SweepProgress {
  /** Candidates handled so far, of `total`. */
  done: number;
  total: number;
  /** Sessions erased so far. */
  erased: number;
}

/** Options of a sweep. */
export interface SweepOptions {
  /** Candidates erased per batch, between progress reports (default 100). */
  batchSize?: number | undefined;
  onProgress?: ((progress: SweepProgress) => void) | undefined;
  /** The clock the age is measured against (default: now). */
  now?: Date | undefined;
  /** Only this owner's sessions (the others are not examined); default every registered session. */
  owner?: string | undefined;
}

/** The sessions a sweep selected, before it erases them. */
export interface SweepSelection {
  /** Sessions inactive since before this (ISO time) were candidates. */
  cutoff: string;
  /** Registered sessions read (of the owner, with `owner`). */
  examined: number;
  /** The selected sessions, newest activity first. */
  candidates: SessionInfo[];
  /** The policy's `keepNewestPerOwner` (0: none), re-checked by each erasure (see eraseSelected). */
  keepNewestPerOwner?: number | undefined;
}

/** What a sweep did. */
export interface SweepReport {
  /** Sessions older than this (ISO time) were candidates. */
  cutoff: string;
  /** Registered sessions read. */
  examined: number;
  /** Sessions selected (inactive, unpinned, not among their owner's newest). */
  candidates: number;
  /** Candidates not erased: erased meanwhile by another sweeper, written to or pinned since, or held by a writer. */
  skipped: number;
  /** What was erased. */
  erased: ErasureReceipt;
}

/** Erases one session under a condition; null when it did not (see SessionRegistry.erase). */
export type ConditionalErase = (id: string, condition: ErasureCondition) => Promise<ErasureCounts | null>;

/**
 * The erasure of a sweep run without a manager (the CLI's `prune`) on a store that records whose its rows are: each
 * session with every block and entry recorded as its own, and the block of its frozen prompt's key
 * (`_system_prompt_<id>`, the library's own label, which a store may hold unrecorded; removed only unrecorded or the
 * session's own), which no template's label names there.
 */
export function recordEraser(erase: NonNullable<SessionRegistry["erase"]>): ConditionalErase {
  return (id, condition) => erase(id, { blockKeys: [`_system_prompt_${id}`], condition });
}

// The policy and the batch size are refused with INVALID_ARGUMENT at their field: a missing field is `required`,
// another kind of value a `type`, a number out of bounds (NaN and Infinity included) a `range`.
const retentionPolicy = z
  .custom<object>(
    (value) => typeof value === "object" && value !== null,
    rule("A retention policy must be an object with maxAgeMs", "type"),
  )
  .pipe(
    z.object({
      maxAgeMs: numberWhere(
        "Retention policy: maxAgeMs must be a finite number of milliseconds >= 0",
        (ms) => Number.isFinite(ms) && ms >= 0,
      ),
      keepNewestPerOwner: numberWhere(
        "Retention policy: keepNewestPerOwner must be a whole number >= 0",
        (n) => Number.isSafeInteger(n) && n >= 0,
      ).optional(),
    }),
  );

const sweepBatch = numberWhere(
  "batchSize must be a whole number from 1 to 10000",
  (n) => Number.isSafeInteger(n) && n >= 1 && n <= 10_000,
).optional();

/** Validates a policy (`INVALID_ARGUMENT` naming the field); answers a copy. */
export function parsePolicy(policy: unknown): RetentionPolicy {
  return stripUndefined(parseInput(retentionPolicy, policy));
}

function parseBatchSize(size: unknown): number {
  return parseInput(sweepBatch, size, { path: "batchSize" }) ?? 100;
}

/**
 * The sessions a policy selects among `rows`: inactive before `cutoff`, unpinned, and not in `kept` (the owners'
 * newest as the registry orders them, ownersNewest).
 */
export function selectExpired(
  rows: readonly SessionInfo[],
  cutoff: string,
  kept: ReadonlySet<string>,
): string[] {
  return rows
    .filter((row) => row.updated_at < cutoff && !row.pinned && !kept.has(row.id))
    .map((row) => row.id);
}

const byActivity = (a: SessionInfo, b: SessionInfo) =>
  a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0;

/**
 * Each owner's newest `keep` sessions as the registry lists them now: by last activity, ties by write order (the
 * order every sweeper and `list()` agree on; a scan's order, by id, would keep an arbitrary one of sessions active
 * in the same millisecond, and a pinned older one could take the slot of the newest). One indexed page per owner.
 */
async function ownersNewest(
  registry: SessionRegistry,
  owners: Iterable<string>,
  keep: number,
): Promise<Set<string>> {
  const kept = new Set<string>();
  if (keep === 0) return kept;
  for (const owner of owners) {
    for (const row of await registry.list({ owner, limit: keep })) kept.add(row.id);
  }
  return kept;
}

/** Reads the registry and selects what `policy` would erase; erases nothing (a dry run, or a sweep's first half). */
export async function selectForSweep(
  registry: SessionRegistry,
  given: RetentionPolicy,
  options: Pick<SweepOptions, "now" | "owner"> = {},
): Promise<SweepSelection> {
  const policy = parsePolicy(given);
  const owner = options.owner === undefined ? undefined : parseOwner(options.owner);
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - policy.maxAgeMs).toISOString();
  const rows: SessionInfo[] = [];
  for await (const row of registry.scan({ pageSize: 500 })) {
    if (owner === undefined || row.owner === owner) rows.push(row);
  }
  const keep = policy.keepNewestPerOwner ?? 0;
  // Only an owner with a session the age rule selects needs its newest read: one indexed page each.
  const owners = new Set(
    rows.flatMap((row) =>
      row.owner === undefined || row.pinned || row.updated_at >= cutoff ? [] : [row.owner],
    ),
  );
  const selected = new Set(selectExpired(rows, cutoff, await ownersNewest(registry, owners, keep)));
  const candidates = rows.filter((row) => selected.has(row.id)).sort(byActivity);
  return { cutoff, examined: rows.length, candidates, keepNewestPerOwner: keep };
}

/**
 * Erases the sessions of a selection in batches, each under the condition it was selected by, the owner's newest
 * included: a candidate that became one of them since (a newer one erased by a caller or another policy's sweep, a
 * write that moved it up) is skipped, as the store checks it in the erasing transaction.
 */
export async function eraseSelected(
  selection: SweepSelection,
  erase: ConditionalErase,
  options: Pick<SweepOptions, "batchSize" | "onProgress"> = {},
): Promise<SweepReport> {
  const batchSize = parseBatchSize(options.batchSize);
  const { cutoff, examined } = selection;
  const keep = selection.keepNewestPerOwner ?? 0;
  const report: SweepReport = {
    cutoff,
    examined,
    candidates: selection.candidates.length,
    skipped: 0,
    erased: emptyReceipt(),
  };
  const condition: ErasureCondition = {
    inactiveBefore: cutoff,
    unpinned: true,
    skipLocked: true,
    ...(keep > 0 ? { keepNewest: keep } : {}),
  };
  const rows = selection.candidates;
  for (let at = 0; at < rows.length; at += batchSize) {
    for (const { id } of rows.slice(at, at + batchSize)) {
      const counts = await erase(id, condition);
      if (!counts) {
        report.skipped++;
        continue;
      }
      report.erased.sessionIds.push(id);
      addCounts(report.erased, counts);
    }
    options.onProgress?.({
      done: Math.min(at + batchSize, rows.length),
      total: rows.length,
      erased: report.erased.sessionIds.length,
    });
  }
  return report;
}

/** Applies `policy` to every registered session (see the module comment). */
export async function sweep(
  registry: SessionRegistry,
  erase: ConditionalErase,
  policy: RetentionPolicy,
  options: SweepOptions = {},
): Promise<SweepReport> {
  parseBatchSize(options.batchSize); // a bad batch size fails before the registry is read
  return eraseSelected(await selectForSweep(registry, policy, options), erase, options);
}
