/**
 * What the memory tool shows the model, in the shapes Anthropic documents for `memory_20250818` and its SDK's
 * file-system helper writes: six-wide right-aligned line numbers and a tab, `{size}\t{path}` listing lines.
 */
import { utf8Length } from "../../runtime/bytes.js";
import { filesWithin, type MemoryFiles } from "./directory.js";

/** The most lines a file may have for `view` (Anthropic's limit; six-digit line numbers). */
export const MAX_LINES = 999_999;
const WIDTH = String(MAX_LINES).length;

/** Lines `from`..`to` (1-based, inclusive) of `lines`, each numbered. */
export function numbered(lines: readonly string[], from: number, to: number): string {
  const out: string[] = [];
  for (let n = from; n <= to && n <= lines.length; n++) {
    out.push(`${String(n).padStart(WIDTH, " ")}\t${lines[n - 1]}`);
  }
  return out.join("\n");
}

/** A size as `du -h` writes it: 0B, 512B, 1.5K, 2M. */
export function humanSize(bytes: number): string {
  if (bytes === 0) return "0B";
  const units = ["B", "K", "M", "G"];
  const i = Math.min(units.length - 1, Math.floor(Math.log(bytes) / Math.log(1024)));
  const size = bytes / 1024 ** i;
  return `${Number.isInteger(size) ? size : size.toFixed(1)}${units[i]}`;
}

/** A file or directory name the listing leaves out, as Anthropic's helper does. */
function hidden(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

/**
 * The listing of directory `dir`: itself, then what lies one and two levels below it (directories with a trailing
 * `/`), each with the bytes of the files in it.
 */
export function listing(files: MemoryFiles, dir: string): string {
  const sizes = new Map<string, number>();
  let total = 0;
  for (const path of filesWithin(files, dir)) {
    const bytes = utf8Length(files.get(path) ?? "");
    total += bytes;
    const parts = path.slice(dir.length + 1).split("/");
    if (parts.some(hidden)) continue;
    // The entry one level down, and the one two levels down when there is one.
    for (let depth = 1; depth <= Math.min(2, parts.length); depth++) {
      const isDir = depth < parts.length;
      const entry = `${dir}/${parts.slice(0, depth).join("/")}${isDir ? "/" : ""}`;
      sizes.set(entry, (sizes.get(entry) ?? 0) + bytes);
    }
  }
  const lines = [`${humanSize(total)}\t${dir}`];
  for (const entry of [...sizes.keys()].sort()) lines.push(`${humanSize(sizes.get(entry) ?? 0)}\t${entry}`);
  return (
    `Here're the files and directories up to 2 levels deep in ${dir}, excluding hidden items and node_modules:\n` +
    lines.join("\n")
  );
}

/** The 1-based line of the character at `index`. */
export function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
}
