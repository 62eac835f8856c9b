/**
 * Values that `JSON.stringify` accepts but stores without their data: a Map or Set becomes `{}`, an ArrayBuffer
 * `{}`, a typed array an object of numbered keys (`{"0":137,"1":80,…}`) that reads back as a plain object. A
 * message holding one would be stored "successfully" and read back changed, so writes refuse it instead.
 */

// Every such value leaves one of these in the JSON; a message without them needs no walk (the common case).
const LOSSY_HINT = /\{\}|\{"0":/;

/** Where a lossy value sits in a message, and what it is (`Map`, `Uint8Array`, …). */
export interface LossyValue {
  path: string;
  kind: string;
}

function lossyKind(value: object): string | null {
  if (value instanceof Map || value instanceof Set || value instanceof WeakMap || value instanceof WeakSet) {
    return value.constructor.name;
  }
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value))
    return Object.prototype.toString.call(value).slice(8, -1);
  if (typeof SharedArrayBuffer !== "undefined" && value instanceof SharedArrayBuffer)
    return "SharedArrayBuffer";
  return null;
}

function childPath(path: string, key: string, inArray: boolean): string {
  if (inArray) return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The first value in `value` that its JSON (`json`, already made) does not hold, or null. Walks only when the JSON
 * shows a trace of one, iteratively (no depth limit), and skips what serialises through `toJSON` (Date, Buffer).
 */
export function findLossyValue(value: unknown, json: string): LossyValue | null {
  if (!LOSSY_HINT.test(json)) return null;
  const stack: { value: unknown; path: string }[] = [{ value, path: "" }];
  const seen = new Set<object>();
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const current = entry.value;
    if (current === null || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    // A value with toJSON decides its own JSON (a Date's string, a Buffer's `{ type, data }`).
    if (typeof (current as { toJSON?: unknown }).toJSON === "function") continue;
    const kind = lossyKind(current);
    if (kind !== null) return { path: entry.path, kind };
    const inArray = Array.isArray(current);
    for (const key of Object.keys(current)) {
      stack.push({
        value: (current as Record<string, unknown>)[key],
        path: childPath(entry.path, key, inArray),
      });
    }
  }
  return null;
}

/** What to tell a caller about a {@link LossyValue}: what JSON would make of it and what to store instead. */
export function lossyAdvice(found: LossyValue): string {
  const binary = found.kind !== "Map" && found.kind !== "Set" && !found.kind.startsWith("Weak");
  const instead = binary
    ? "encode binary data as a base64 string or a data: URL"
    : "convert it to a plain object or an array";
  return `a ${found.kind} at ${found.path || "the top level"}, which JSON cannot store without losing its contents: ${instead}`;
}
