/**
 * Streaming history reads, backend-neutral: a backend describes its path (raw segments between overlays) and
 * reads rows in windows; this module cuts the windows to the batch bounds, parses, restores payloads per batch
 * and yields. Memory held at any time is one window of stored JSON plus one batch, whatever the session's length.
 */

import { z } from "zod";
import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type { HistoryReadOptions } from "../contract/provider.js";
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { overlayMessage } from "../message/overlay.js";
import { optionsArg } from "../options-arg.js";
import { utf8Length } from "../runtime/bytes.js";
import { parseInput } from "../schema/parse.js";
import { numberWhere } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { readBackBytes } from "./media/read-back.js";

/** Default number of messages per batch. */
export const DEFAULT_BATCH_SIZE = 100;
/** Default bytes per batch (1 MiB). */
export const DEFAULT_BATCH_BYTES = 1024 * 1024;

/** The tree columns of one stored row: a backend handle, its parent's, its depth and stored bytes. */
export interface PathRow<K> {
  key: K;
  parent: K | null;
  depth: number;
  bytes: number;
  /** Stored bytes of the path from the root through this row. */
  cumBytes: number;
}

/** A row of a window read, with its stored JSON (null: left out of the window, content not read). */
export interface WindowRow<K> extends PathRow<K> {
  json: string | null;
}

/** One piece of an overlay-applied path: raw rows from `bottom` up to depth `top`, or an overlay's summary. */
export type PathItem<K> =
  | { kind: "rows"; bottom: PathRow<K>; top: number }
  | { kind: "overlay"; message: SessionMessage };

/** How a window read is bounded, walking up from its bottom row. */
export interface WindowLimits {
  /** Never above this depth. */
  top: number;
  /** At most this many rows. */
  rows: number;
  /** Stored bytes the window may hold. */
  maxBytes: number;
  /**
   * Newest first (null): the walk stops before the row that would overflow `maxBytes`, but always takes the first
   * `minRows`. Oldest first (a number: the path's stored bytes above `top`): the walk covers every row, and only
   * rows whose bytes from `top` fit (and the row at `top`) carry content.
   */
  base: number | null;
  minRows: number;
}

/** What a backend provides for windowed path reads (each method reads only what it returns). */
export interface PathBackend<K> {
  /** The row of `leafId` (the latest leaf when omitted); null when unknown. */
  leaf(leafId: string | null | undefined): Promise<PathRow<K> | null>;
  /** The overlay-applied path to `leaf`, root first. */
  plan(leaf: PathRow<K>): Promise<PathItem<K>[]>;
  /** The row at `depth` on the path through `node` (skip pointers: O(log depth) reads). */
  ancestor(node: PathRow<K>, depth: number): Promise<PathRow<K>>;
  /** One window walking up from `bottom` (newest first), content joined from continuation rows. */
  read(bottom: K, limits: WindowLimits): Promise<WindowRow<K>[]>;
  /** Restores offloaded payloads of the messages (one lookup for all). */
  hydrate(messages: SessionMessage[]): Promise<SessionMessage[]>;
}

/**
 * The path to `leaf` under its chosen overlays (oldest first): each overlay's summary for its range, the rows between
 * as runs up from `above(overlay)` (the row above its first; undefined: no run), and up from the leaf.
 */
export async function planPath<
  K,
  O extends { fromDepth: number; toDepth: number; compaction: StoredCompaction },
>(
  leaf: PathRow<K>,
  chosen: Iterable<O>,
  above: (overlay: O, top: number) => PathRow<K> | undefined | Promise<PathRow<K> | undefined>,
): Promise<PathItem<K>[]> {
  const items: PathItem<K>[] = [];
  let next = 0;
  for (const overlay of chosen) {
    if (overlay.fromDepth > next) {
      const bottom = await above(overlay, next);
      if (bottom) items.push({ kind: "rows", bottom, top: next });
    }
    items.push({ kind: "overlay", message: overlayMessage(overlay.compaction) });
    next = overlay.toDepth + 1;
  }
  if (leaf.depth >= next) items.push({ kind: "rows", bottom: leaf, top: next });
  return items;
}

/** A byte count a database parameter can hold (Infinity is not one everywhere). */
export function boundBytes(bytes: number): number {
  return Math.min(bytes, Number.MAX_SAFE_INTEGER);
}

/** Validated batch bounds. */
export interface BatchBounds {
  rows: number;
  bytes: number;
}

const batchOptions = z.object({
  batchSize: numberWhere("batchSize must be a whole number >= 1", (n) => Number.isInteger(n) && n >= 1),
  maxBatchBytes: numberWhere("maxBatchBytes must be a number > 0", (n) => n > 0),
  signal: z
    .custom<AbortSignal>(
      (signal) => typeof signal === "object" && signal !== null && "aborted" in signal,
      rule("signal must be an AbortSignal", "type"),
    )
    .optional(),
});

/** Checks the batch options; `INVALID_ARGUMENT` for anything but a whole number >= 1 / a number > 0. */
export function batchBounds(options: HistoryReadOptions): BatchBounds {
  const { batchSize, maxBatchBytes } = parseInput(batchOptions, {
    batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
    maxBatchBytes: options.maxBatchBytes ?? DEFAULT_BATCH_BYTES,
    signal: options.signal,
  });
  return { rows: batchSize, bytes: maxBatchBytes };
}

/**
 * Every window is one unbroken run of the path: its first row at `depth`, each next one `step` (±1) further. Rows
 * are walked through parent pointers, so a message deleted while a read is running (its children spliced to its
 * parent) would otherwise leave a hole no error reports.
 */
function assertContiguous(rows: readonly { depth: number }[], depth: number, step: 1 | -1): void {
  for (const [index, row] of rows.entries()) if (row.depth !== depth + index * step) throw pathChanged();
}

/** A row the walk still needs is gone: a concurrent delete; never a silently shorter history (every backend). */
export function pathChanged(): SessionError {
  return new SessionError("CONFLICT", "The path changed during a streaming read (a message was deleted)");
}

/** Throws the signal's reason (an AbortError when it has none) once it is aborted. */
export function checkAbort(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** Gathers messages into batches within the bounds; a full batch is restored and handed out. */
class Batcher {
  private messages: SessionMessage[] = [];
  private bytes = 0;

  constructor(
    private readonly bounds: BatchBounds,
    readonly restore: (messages: SessionMessage[]) => Promise<SessionMessage[]>,
  ) {}

  /** Adds a message; returns the previous batch when this one would not fit in it. */
  add(message: SessionMessage, size: number): SessionMessage[] | null {
    let full: SessionMessage[] | null = null;
    const fits = this.messages.length < this.bounds.rows && this.bytes + size <= this.bounds.bytes;
    if (this.messages.length > 0 && !fits) full = this.flush();
    this.messages.push(message);
    this.bytes += size;
    return full;
  }

  /** The batch gathered so far (null when empty), and a fresh one started. */
  flush(): SessionMessage[] | null {
    if (this.messages.length === 0) return null;
    const batch = this.messages;
    this.messages = [];
    this.bytes = 0;
    return batch;
  }
}

/** Windows of one raw segment, oldest first: each found by a skip-pointer climb to its last row. */
async function* windowsUp<K>(
  backend: PathBackend<K>,
  segment: { bottom: PathRow<K>; top: number },
  bounds: BatchBounds,
  signal: AbortSignal | undefined,
): AsyncGenerator<WindowRow<K>[]> {
  let top = segment.top;
  let base: number | null = null;
  while (top <= segment.bottom.depth) {
    checkAbort(signal);
    if (base === null) {
      const first =
        top === segment.bottom.depth ? segment.bottom : await backend.ancestor(segment.bottom, top);
      base = first.cumBytes - first.bytes;
    }
    const end = Math.min(top + bounds.rows - 1, segment.bottom.depth);
    const last = end === segment.bottom.depth ? segment.bottom : await backend.ancestor(segment.bottom, end);
    const limits: WindowLimits = {
      top,
      rows: bounds.rows,
      maxBytes: boundBytes(bounds.bytes),
      base,
      minRows: 1,
    };
    const rows: WindowRow<K>[] = (await backend.read(last.key, limits))
      .filter((row) => row.json !== null)
      .reverse();
    assertContiguous(rows, top, 1);
    const kept: WindowRow<K> | undefined = rows[rows.length - 1];
    if (!kept) throw pathChanged();
    yield rows;
    base = kept.cumBytes;
    top = kept.depth + 1;
  }
}

/** Windows of one raw segment, newest first: each one walk up from where the previous one stopped. */
async function* windowsDown<K>(
  backend: PathBackend<K>,
  segment: { bottom: PathRow<K>; top: number },
  bounds: BatchBounds,
  signal: AbortSignal | undefined,
): AsyncGenerator<WindowRow<K>[]> {
  let bottom: K | null = segment.bottom.key;
  const limits: WindowLimits = {
    top: segment.top,
    rows: bounds.rows,
    maxBytes: boundBytes(bounds.bytes),
    base: null,
    minRows: 1,
  };
  let depth = segment.bottom.depth;
  while (bottom !== null) {
    checkAbort(signal);
    const rows = await backend.read(bottom, limits);
    // The next window starts from a parent read earlier: a delete since then splices the path under the walk.
    assertContiguous(rows, depth, -1);
    const last = rows[rows.length - 1];
    if (!last) throw pathChanged();
    yield rows;
    depth = last.depth - 1;
    bottom = last.depth > segment.top ? last.parent : null;
  }
}

/**
 * The overlay-applied path to `options.leafId` (or the latest leaf) in batches within the bounds, root first or
 * newest first. Each window's content is read only when the consumer asks for the next batch.
 */
export async function* walkHistory<K>(
  backend: PathBackend<K>,
  given?: HistoryReadOptions | null,
): AsyncGenerator<SessionMessage[]> {
  const options = optionsArg(given, "history");
  const bounds = batchBounds(options);
  const { signal } = options;
  const newestFirst = options.newestFirst === true;
  checkAbort(signal);
  const leaf = await backend.leaf(options.leafId);
  if (!leaf) return;
  checkAbort(signal);
  const plan = await backend.plan(leaf);
  if (newestFirst) plan.reverse();
  const batcher = new Batcher(bounds, async (messages) => {
    const restored = await backend.hydrate(messages);
    checkAbort(signal);
    return restored;
  });
  for (const item of plan) {
    if (item.kind === "overlay") {
      const full = batcher.add(item.message, utf8Length(JSON.stringify(item.message)));
      if (full) yield await batcher.restore(full);
      continue;
    }
    const windows = newestFirst
      ? windowsDown(backend, item, bounds, signal)
      : windowsUp(backend, item, bounds, signal);
    for await (const window of windows) {
      checkAbort(signal);
      for (const row of window) {
        const json = row.json ?? "";
        const message = parseMessage(json);
        if (!message) continue;
        const full = batcher.add(message, readBackBytes(json, row.bytes));
        if (full) yield await batcher.restore(full);
      }
    }
  }
  const last = batcher.flush();
  if (last) yield await batcher.restore(last);
}
