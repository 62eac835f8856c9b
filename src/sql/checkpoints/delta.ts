/**
 * The chain rule of stored channel values (docs/LANGGRAPH.md, "Storage"). A channel's value at a version is one row,
 * either **full** (`base` null: `data` is the value's bytes) or a **delta** of an earlier version of the same
 * session, namespace and channel (`base` that version, `prefix` n, `data` a suffix): its bytes are the first n bytes
 * of the base's value followed by the suffix. A messages list that grows by one message per step serializes to the
 * same bytes plus the new message and a closing bracket, so each version stores only what it added.
 *
 * - The writer deltas against the last version of the channel this process wrote or read (a cache, {@link
 *   ValueCache}); without one, or when the delta would not pay, it stores the value full.
 * - A delta needs a common prefix of at least {@link MIN_PREFIX} bytes, a chain of at most {@link MAX_DEPTH} rows
 *   below it, and the chain's stored bytes (the full row's and every suffix on the way) at most
 *   {@link CHAIN_FACTOR} times the value's length: a read of any version reads at most that much, however long the
 *   thread. A value rewritten (not grown) therefore starts a new full row soon.
 * - Every row carries a random `tag`; a delta row is inserted only while its base row exists with the tag the writer
 *   knows (the statement checks it), otherwise it goes in full: a chain never points at a row another process
 *   deleted, nor at one written again under the same version after the thread was deleted.
 * - A read fetches the chains of every value it needs in one recursive query and rebuilds each from its full row up
 *   ({@link rebuild}); rows are never changed after they are written, so a chain read is exact whatever was written
 *   since, forks included (a fork's version is a delta of whatever version the writer held, on any branch).
 */

/** Below this common prefix a delta is not worth its row's bookkeeping. */
export const MIN_PREFIX = 64;
/** At most this many deltas below a full row. */
export const MAX_DEPTH = 512;
/** A chain's stored bytes at most this many times the value's length. */
export const CHAIN_FACTOR = 2;

/** A value this process knows: the version, its bytes, and its chain's depth and stored bytes. */
export interface KnownValue {
  version: string;
  tag: string;
  bytes: Uint8Array;
  depth: number;
  chain: number;
  /**
   * The row's stored bytes (its delta's suffix or its full value) with the base and prefix they are stored under and
   * the serializer's tag, while the row may still be turned into a reference (value-refs.ts): cleared once a put
   * tried, and absent for a row that is one.
   */
  stored?: { type: string; bytes: Uint8Array; base: string | null; prefix: number } | undefined;
}

/** How a value is stored: full (`base` null) or a delta of `base`. */
export interface ValuePlan {
  base: string | null;
  /** The base row's tag (null for a full row). */
  baseTag: string | null;
  prefix: number;
  /** The stored bytes: the whole value, or the suffix. */
  data: Uint8Array;
  depth: number;
  chain: number;
}

const NodeBuf = (globalThis as { Buffer?: typeof import("node:buffer").Buffer }).Buffer;
// Compared a block at a time natively where Buffer is (a long thread's list is half a megabyte at every put).
const BLOCK = 4096;

/** The length of the common prefix of `a` and `b`. */
export function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  if (NodeBuf) {
    const x = NodeBuf.from(a.buffer, a.byteOffset, a.byteLength);
    const y = NodeBuf.from(b.buffer, b.byteOffset, b.byteLength);
    while (i + BLOCK <= n && x.compare(y, i, i + BLOCK, i, i + BLOCK) === 0) i += BLOCK;
  }
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** How `bytes` is stored, given the version this process knows of the channel (undefined: none). */
export function planValue(bytes: Uint8Array, known: KnownValue | undefined): ValuePlan {
  const full: ValuePlan = {
    base: null,
    baseTag: null,
    prefix: 0,
    data: bytes,
    depth: 0,
    chain: bytes.length,
  };
  if (!known || known.depth >= MAX_DEPTH) return full;
  const prefix = commonPrefix(known.bytes, bytes);
  if (prefix < MIN_PREFIX) return full;
  const suffix = bytes.subarray(prefix);
  const chain = known.chain + suffix.length;
  if (chain > CHAIN_FACTOR * bytes.length) return full;
  return { base: known.version, baseTag: known.tag, prefix, data: suffix, depth: known.depth + 1, chain };
}

/** One stored value row as a chain read answers it (its data already opened). */
export interface ChainRow {
  version: string;
  tag: string;
  type: string;
  base: string | null;
  prefix: number;
  data: Uint8Array | null;
  depth: number;
  chain: number;
  /** Whether the row keeps part of its bytes in another row (value-refs.ts). */
  referring?: boolean;
}

/**
 * The bytes of `version` from a chain read's rows of one channel (`rows` by version); undefined when a row of the
 * chain is missing (a chain never is: its rows are immutable and deleted only with the thread). Rebuilt in one
 * buffer from the full row up: each delta cuts it to its prefix and appends its suffix, so a chain costs its stored
 * bytes once, not its depth times the value's length.
 */
export function rebuild(rows: ReadonlyMap<string, ChainRow>, version: string): Uint8Array | null | undefined {
  const path: ChainRow[] = [];
  for (let at: string | null = version; at !== null; ) {
    const row = rows.get(at);
    if (!row || path.length > rows.size) return undefined;
    path.push(row);
    at = row.base;
  }
  const full = path[path.length - 1] as ChainRow;
  if (full.data === null) return path.length === 1 ? null : undefined;
  let buffer = new Uint8Array(Math.max(full.data.length, 64));
  buffer.set(full.data, 0);
  let length = full.data.length;
  for (let i = path.length - 2; i >= 0; i--) {
    const row = path[i] as ChainRow;
    const suffix = row.data ?? new Uint8Array();
    if (row.prefix > length) return undefined;
    const needed = row.prefix + suffix.length;
    if (needed > buffer.length) {
      const grown = new Uint8Array(Math.max(needed, buffer.length * 2));
      grown.set(buffer.subarray(0, row.prefix), 0);
      buffer = grown;
    }
    buffer.set(suffix, row.prefix);
    length = needed;
  }
  return buffer.slice(0, length);
}

/** The versions of channels this process wrote or read last, per session, namespace and channel (bounded). */
export class ValueCache {
  private readonly values = new Map<string, KnownValue>();

  constructor(private readonly limit = 512) {}

  private static key(sessionId: string, ns: string, channel: string): string {
    return JSON.stringify([sessionId, ns, channel]);
  }

  get(sessionId: string, ns: string, channel: string): KnownValue | undefined {
    return this.values.get(ValueCache.key(sessionId, ns, channel));
  }

  set(sessionId: string, ns: string, channel: string, value: KnownValue): void {
    const key = ValueCache.key(sessionId, ns, channel);
    this.values.delete(key);
    this.values.set(key, value);
    // The oldest entry goes first (a Map keeps insertion order).
    if (this.values.size > this.limit) this.values.delete(this.values.keys().next().value as string);
  }

  /** The channels this process knows a value of in a session's namespace, with the value. */
  *channels(sessionId: string, ns: string): Generator<[string, KnownValue]> {
    const head = `${JSON.stringify([sessionId, ns]).slice(0, -1)},`;
    for (const [key, value] of this.values)
      if (key.startsWith(head)) yield [(JSON.parse(key) as string[])[2] as string, value];
  }
}
