/**
 * Total (never-throwing) serialisation helpers shared by the estimator, the truncator and the prompt builder.
 * Message content comes from models and tools, so it can hold BigInts, cycles or hostile `toJSON`/`toString`
 * methods; none of the utils may crash on such input, they degrade to a weaker rendering instead.
 */

/** `String(value)`, or `""` when even that throws (null-prototype objects, throwing `toString`). */
export function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return "";
  }
}

/** JSON of `value`, `undefined` where JSON has no rendering (undefined, functions, symbols), `String()` when JSON throws. */
export function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    // Circular structures and BigInts cannot be JSON-encoded; a weaker rendering beats an exception.
    return safeString(value);
  }
}

/** The text a value is measured or shown by: strings as they are, anything else as JSON (or `String()`). */
export function renderValue(value: unknown): string {
  if (typeof value === "string") return value;
  return safeJson(value) ?? safeString(value);
}

/** The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair. */
export function sliceChars(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  // A lone high surrogate would be re-escaped as `\udXXX` by JSON and render as garbage, so drop it.
  const last = text.charCodeAt(max - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return text.slice(0, end);
}
