/**
 * The six commands over the files in memory, with no storage: each answers the model's string and, when it
 * changes something, the next directory, which the caller writes on the condition that nothing changed meanwhile.
 * Success and error strings are those Anthropic documents for the tool (and its SDK's helper writes); the few
 * cases it does not cover (limits, a file where a directory is needed) are `Error: …` strings of the same kind.
 */
import { utf8Length } from "../../runtime/bytes.js";
import { isDirectory, isFile, type MemoryFiles, type MemoryToolLimits, overLimit } from "./directory.js";
import { lineOf, listing, MAX_LINES, numbered } from "./format.js";
import type { MemoryToolCommand } from "./input.js";
import { ancestors, isWithin, MEMORIES_ROOT } from "./paths.js";

/** What a command answers: the model's string and, when it changed the directory, the new files. */
export interface CommandResult {
  output: string;
  next?: MemoryFiles;
}

/** Runs one checked command over `files` (which it never changes). */
export function runCommand(
  files: MemoryFiles,
  command: MemoryToolCommand,
  limits: MemoryToolLimits,
): CommandResult {
  switch (command.command) {
    case "view":
      return { output: view(files, command.path, command.view_range) };
    case "create":
      return create(files, command.path, command.file_text, limits);
    case "str_replace":
      return strReplace(files, command.path, command.old_str, command.new_str, limits);
    case "insert":
      return insert(files, command.path, command.insert_line, command.insert_text, limits);
    case "delete":
      return remove(files, command.path);
    case "rename":
      return rename(files, command.old_path, command.new_path, limits);
  }
}

function view(files: MemoryFiles, path: string, range: [number, number] | undefined): string {
  const content = files.get(path);
  if (content === undefined) {
    return isDirectory(files, path)
      ? listing(files, path)
      : `The path ${path} does not exist. Please provide a valid path.`;
  }
  const lines = content.split("\n");
  if (lines.length > MAX_LINES) return `File ${path} exceeds maximum line limit of 999,999 lines.`;
  let [from, to] = range ?? [1, lines.length];
  if (to === -1) to = lines.length;
  if (from > lines.length) {
    return (
      `Error: Invalid \`view_range\` parameter: [${range?.join(", ")}]. Its first element should be within the ` +
      `range of lines of the file: [1, ${lines.length}]`
    );
  }
  return `Here's the content of ${path} with line numbers:\n${numbered(lines, from, to)}`;
}

/** Why a file cannot be written at `path`: it is a directory, or one of its directories is a file. */
function notWritable(files: MemoryFiles, path: string): string | undefined {
  if (path === MEMORIES_ROOT || isDirectory(files, path)) return `Error: The path ${path} is a directory`;
  const file = ancestors(path).find((dir) => isFile(files, dir));
  return file === undefined ? undefined : `Error: The path ${file} is a file, not a directory`;
}

function create(files: MemoryFiles, path: string, text: string, limits: MemoryToolLimits): CommandResult {
  if (isFile(files, path) || isDirectory(files, path))
    return { output: `Error: File ${path} already exists` };
  const refused = notWritable(files, path);
  if (refused !== undefined) return { output: refused };
  return written(files, path, text, limits, `File created successfully at: ${path}`);
}

function strReplace(
  files: MemoryFiles,
  path: string,
  oldStr: string,
  newStr: string,
  limits: MemoryToolLimits,
): CommandResult {
  const content = files.get(path);
  if (content === undefined) {
    return { output: `Error: The path ${path} does not exist. Please provide a valid path.` };
  }
  if (oldStr === "") return { output: "Error: `old_str` must not be empty" };
  const first = content.indexOf(oldStr);
  if (first === -1) {
    return {
      output: `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`,
    };
  }
  if (content.indexOf(oldStr, first + 1) !== -1) {
    // Every start of old_str, overlapping ones included: each is a place the edit could mean.
    const lines = new Set<number>();
    for (let at = first; at !== -1; at = content.indexOf(oldStr, at + 1)) lines.add(lineOf(content, at));
    return {
      output:
        `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ` +
        `${[...lines].join(", ")}. Please ensure it is unique`,
    };
  }
  const next = content.slice(0, first) + newStr + content.slice(first + oldStr.length);
  const line = lineOf(content, first);
  const shownTo = line + newStr.split("\n").length - 1 + 2;
  const snippet = numbered(next.split("\n"), Math.max(1, line - 2), shownTo);
  return written(
    files,
    path,
    next,
    limits,
    `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet}`,
  );
}

function insert(
  files: MemoryFiles,
  path: string,
  at: number,
  text: string,
  limits: MemoryToolLimits,
): CommandResult {
  const content = files.get(path);
  if (content === undefined) return { output: `Error: The path ${path} does not exist` };
  const lines = content.split("\n");
  if (at < 0 || at > lines.length) {
    return {
      output:
        `Error: Invalid \`insert_line\` parameter: ${at}. It should be within the range of lines of the file: ` +
        `[0, ${lines.length}]`,
    };
  }
  // One trailing newline ends the inserted text; it does not add an empty line (as Anthropic's helper).
  lines.splice(at, 0, text.endsWith("\n") ? text.slice(0, -1) : text);
  return written(files, path, lines.join("\n"), limits, `The file ${path} has been edited.`);
}

function remove(files: MemoryFiles, path: string): CommandResult {
  if (path === MEMORIES_ROOT) return { output: "Error: Cannot delete the /memories directory itself" };
  const doomed = [...files.keys()].filter((file) => isWithin(file, path));
  if (doomed.length === 0) return { output: `Error: The path ${path} does not exist` };
  const next = new Map(files);
  for (const file of doomed) next.delete(file);
  return { output: `Successfully deleted ${path}`, next };
}

function rename(files: MemoryFiles, from: string, to: string, limits: MemoryToolLimits): CommandResult {
  if (from === MEMORIES_ROOT) return { output: "Error: Cannot rename the /memories directory itself" };
  const moved = [...files.keys()].filter((file) => isWithin(file, from));
  if (moved.length === 0) return { output: `Error: The path ${from} does not exist` };
  if (isFile(files, to) || isDirectory(files, to))
    return { output: `Error: The destination ${to} already exists` };
  if (isWithin(to, from)) return { output: `Error: Cannot move ${from} into itself (${to})` };
  const refused = notWritable(files, to);
  if (refused !== undefined) return { output: refused };
  const next = new Map(files);
  const changed: string[] = [];
  for (const file of moved) {
    const target = to + file.slice(from.length);
    const bytes = utf8Length(target);
    if (bytes > limits.maxPathBytes) {
      return {
        output: `Error: The rename would make a path of ${bytes} bytes (of ${file}); a memory path may have at most ${limits.maxPathBytes}`,
      };
    }
    next.set(target, next.get(file) ?? "");
    next.delete(file);
    changed.push(target);
  }
  const over = overLimit(next, changed, limits);
  return over === undefined ? { output: `Successfully renamed ${from} to ${to}`, next } : { output: over };
}

/** `files` with `path` set to `content`, or the limit it would break. */
function written(
  files: MemoryFiles,
  path: string,
  content: string,
  limits: MemoryToolLimits,
  output: string,
): CommandResult {
  const next = new Map(files);
  next.set(path, content);
  const over = overLimit(next, [path], limits);
  return over === undefined ? { output, next } : { output: over };
}
