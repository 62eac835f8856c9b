/**
 * The paths of the memory tool. Nothing here touches a file system: a path only names a file of the stored
 * directory, so the rules exist to keep every name canonical (one spelling per file) and to refuse any spelling
 * that would mean another place to a reader that does resolve it (a file system, a URL decoder, Windows).
 */
import { CONTROL, isWellFormed } from "../../message/ids.js";
import { utf8Length } from "../../runtime/bytes.js";

/** The directory every path of the memory tool lies in, as Anthropic's tool names it. */
export const MEMORIES_ROOT = "/memories";

/** A checked path (`/memories` or `/memories/a/b`, no trailing slash), or the error string for the model. */
export type PathCheck = { ok: true; path: string } | { ok: false; error: string };

// A percent escape: never decoded here, so `%2e%2e` would be a name here and `..` to a reader that decodes it.
const PERCENT_ESCAPE = /%[0-9a-f]{2}/i;

/** The path as an error message shows it: quoted with escapes when it holds anything invisible. */
export function shown(path: string): string {
  return /^[\p{L}\p{N}\p{P}\p{S} ]*$/u.test(path) ? path : JSON.stringify(path);
}

/**
 * Checks a path the model sent: a string under /memories, canonical, at most `maxPathBytes` UTF-8 bytes.
 * Hand-written, as {@link checkInput} is: its refusal is an `Error: …` string for the model, never a throw.
 */
export function checkPath(value: unknown, field: string, maxPathBytes: number): PathCheck {
  if (typeof value !== "string") return refused(`Error: \`${field}\` must be a string`);
  const bytes = utf8Length(value);
  // Checked first, so that no later message echoes a path longer than the limit.
  if (bytes > maxPathBytes) {
    return refused(`Error: The path is ${bytes} bytes long; a memory path may have at most ${maxPathBytes}`);
  }
  const reason = invalidReason(value);
  if (reason !== undefined) return refused(`Error: The path ${shown(value)} is not allowed: ${reason}`);
  const path = value.length > MEMORIES_ROOT.length && value.endsWith("/") ? value.slice(0, -1) : value;
  return { ok: true, path };
}

function refused(error: string): PathCheck {
  return { ok: false, error };
}

function invalidReason(path: string): string | undefined {
  if (!isWellFormed(path)) return "it is not well-formed Unicode";
  if (CONTROL.test(path)) return "it contains a control character";
  if (path.includes("\\")) return "it contains a backslash";
  if (PERCENT_ESCAPE.test(path)) return "it contains a percent escape";
  if (path !== MEMORIES_ROOT && !path.startsWith(`${MEMORIES_ROOT}/`)) {
    return `every memory path starts with ${MEMORIES_ROOT}/`;
  }
  const rest = path.slice(MEMORIES_ROOT.length + 1);
  if (rest === "") return undefined;
  const segments = (rest.endsWith("/") ? rest.slice(0, -1) : rest).split("/");
  for (const segment of segments) {
    if (segment === "") return "it contains an empty segment (//)";
    if (segment === "." || segment === "..") return `it contains a "${segment}" segment`;
    if (segment.trim() !== segment) return "a segment starts or ends with a space";
  }
  return undefined;
}

/** The directories a path lies in, innermost last, without the root: `/memories/a/b/c` → `/memories/a`, `…/a/b`. */
export function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let at = path.indexOf("/", MEMORIES_ROOT.length + 1); at !== -1; at = path.indexOf("/", at + 1)) {
    out.push(path.slice(0, at));
  }
  return out;
}

/** True when `path` is `dir` itself or lies anywhere below it. */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}
