/**
 * The stored memory directory: every file of one owner's (or session's) /memories in one context block, as JSON.
 * One block rather than one per file, so that a rename or a directory delete is one conditional write (atomic, no
 * half-moved directory), a listing is one read, and the limits are checked on the whole at once; the limits keep
 * that block small (1 MB by default, under a Durable Object's 2 MB value).
 */
import { SessionError } from "../../errors.js";
import { utf8Length } from "../../runtime/bytes.js";
import { isWithin, MEMORIES_ROOT } from "./paths.js";

/** The sizes the memory tool enforces; a command that would pass one is refused with an error string. */
export interface MemoryToolLimits {
  /** The largest file, in UTF-8 bytes (default 100,000). */
  maxFileBytes: number;
  /** The most files in the directory (default 100). */
  maxFiles: number;
  /** All files together, in UTF-8 bytes (default 1,000,000). */
  maxTotalBytes: number;
  /** The longest path, `/memories/…` included, in UTF-8 bytes (default 255). */
  maxPathBytes: number;
}

/** The default {@link MemoryToolLimits}. */
export const DEFAULT_MEMORY_TOOL_LIMITS: Readonly<MemoryToolLimits> = Object.freeze({
  maxFileBytes: 100_000,
  maxFiles: 100,
  maxTotalBytes: 1_000_000,
  maxPathBytes: 255,
});

/** Files by path (`/memories/a/b.md`); directories exist through the files in them, as in an object store. */
export type MemoryFiles = Map<string, string>;

const FORMAT = "agent-session/memories@1";

/** The files of a stored block (null: nothing stored yet). Throws `STORAGE` for a block that is not one. */
export function parseFiles(stored: string | null, key: string): MemoryFiles {
  const files: MemoryFiles = new Map();
  if (stored === null) return files;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch (cause) {
    throw unreadable(key, cause);
  }
  const record = parsed as { format?: unknown; files?: unknown };
  if (record?.format !== FORMAT || typeof record.files !== "object" || record.files === null) {
    throw unreadable(key);
  }
  for (const [path, content] of Object.entries(record.files)) {
    if (typeof content !== "string" || !isWithin(path, MEMORIES_ROOT)) throw unreadable(key);
    files.set(path, content);
  }
  return files;
}

function unreadable(key: string, cause?: unknown): SessionError {
  return new SessionError(
    "STORAGE",
    `The block "${key}" does not hold a memory directory written by agent-session`,
    cause === undefined ? undefined : { cause },
  );
}

/** The stored form of the files, sorted by path so equal directories store equal text. */
export function serializeFiles(files: MemoryFiles): string {
  const sorted = [...files.keys()].sort();
  return JSON.stringify({ format: FORMAT, files: Object.fromEntries(sorted.map((p) => [p, files.get(p)])) });
}

/** True when `path` names a file. */
export function isFile(files: MemoryFiles, path: string): boolean {
  return files.has(path);
}

/** True when `path` names a directory: the root, or a prefix of some file's path. */
export function isDirectory(files: MemoryFiles, path: string): boolean {
  if (path === MEMORIES_ROOT) return true;
  for (const file of files.keys()) if (file.startsWith(`${path}/`)) return true;
  return false;
}

/** The files at or below `path`, sorted. */
export function filesWithin(files: MemoryFiles, path: string): string[] {
  return [...files.keys()].filter((file) => isWithin(file, path)).sort();
}

/** Why `next` breaks a limit, as the model's error string; undefined when it keeps them all. */
export function overLimit(
  next: MemoryFiles,
  changed: readonly string[],
  limits: MemoryToolLimits,
): string | undefined {
  if (next.size > limits.maxFiles) {
    return `Error: The memory directory may hold at most ${limits.maxFiles} files; delete or merge some first`;
  }
  for (const path of changed) {
    const content = next.get(path);
    if (content === undefined) continue;
    const bytes = utf8Length(content);
    if (bytes > limits.maxFileBytes) {
      return `Error: ${path} would be ${bytes} bytes; a memory file may have at most ${limits.maxFileBytes}`;
    }
  }
  let total = 0;
  for (const content of next.values()) total += utf8Length(content);
  if (total > limits.maxTotalBytes) {
    return (
      `Error: The memory directory would hold ${total} bytes; at most ${limits.maxTotalBytes} are allowed. ` +
      "Delete or shorten files first"
    );
  }
  return undefined;
}
