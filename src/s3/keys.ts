import { SessionError } from "../errors.js";
import { describe } from "../message/describe.js";
import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";

/** S3 and R2 both cap an object key at 1024 bytes of UTF-8. */
const MAX_OBJECT_KEY_BYTES = 1024;

/** True for C0 controls and DEL: a newline in a key would break the `- key: description` listing the model reads. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Why a skill key is unusable, or undefined when it is fine: a key is one or more `/`-separated segments, none empty,
 * `.` or `..`, without backslashes or control characters. Empty segments cover absolute keys (`/etc`) and folder
 * markers (`dir/`); dot segments are refused because path-style URLs let servers and proxies normalise them, which
 * could move a request outside the prefix or into another bucket.
 */
export function skillKeyProblem(key: unknown): string | undefined {
  if (typeof key !== "string" || key.length === 0) return "it is empty";
  if (hasControlCharacter(key)) return "it contains a control character";
  if (key.includes("\\")) return "it contains a backslash";
  for (const segment of key.split("/")) {
    if (segment === "") return "it is absolute or has an empty path segment";
    if (segment === "." || segment === "..") return "it has a '.' or '..' segment";
  }
  return undefined;
}

// A string that breaks a rule is a `format` issue, any other value a `type` one.
const stringRule = (value: unknown) => (typeof value === "string" ? "format" : "type");

/** A usable skill key ({@link skillKeyProblem} words the refusal); parsed at `key`, or `keys.2` in an allow-list. */
export const skillKey = refusedBy<string>((value) => {
  const problem = skillKeyProblem(value);
  return problem === undefined ? undefined : `Invalid skill key ${JSON.stringify(value)}: ${problem}`;
}, stringRule);

/** A key prefix: a string without control characters (empty means the whole bucket). */
export const skillPrefix = refusedBy<string>(
  (value) =>
    typeof value === "string" && !hasControlCharacter(value)
      ? undefined
      : `A skill prefix must be a string without control characters, got ${describe(value)}`,
  stringRule,
);

/** The object key of `key` under `prefix`; throws `INVALID_ARGUMENT` for a bad key or one storage would refuse. */
export function objectKey(prefix: string, key: unknown): string {
  const full = `${prefix}${parseInput(skillKey, key, { path: "key" })}`;
  if (new TextEncoder().encode(full).length > MAX_OBJECT_KEY_BYTES) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `Skill key ${JSON.stringify(key)} makes an object key over ${MAX_OBJECT_KEY_BYTES} bytes`,
      { issues: [{ path: "key", rule: "too_long" }] },
    );
  }
  return full;
}
