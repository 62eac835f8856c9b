// Error-message wording shared by every check that reports a bad value: total, so reporting never fails.
/**
 * A short description of any value for error messages. Total: it never throws, whatever the value (null-prototype
 * objects, throwing `toString`, symbols, BigInts), so a bad argument is reported instead of crashing the report.
 */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  // number, bigint, boolean: String() of a primitive cannot throw.
  return `${typeof value} ${String(value)}`;
}

/** A number as messages show it, with thousands separators (`12,000`) whatever the runtime's locale. */
export const count = (n: number): string => n.toLocaleString("en-US");
