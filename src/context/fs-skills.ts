import { SessionError } from "../errors.js";
import { nodeBuiltin } from "../runtime/load.js";
import type { SkillProvider } from "./types.js";

/** Options of {@link FileSystemSkillProvider}. */
export interface FileSystemSkillOptions {
  /** Only these keys are listed and loadable (all when omitted or empty). */
  keys?: readonly string[];
}

const EXTENSION = ".md";

// node:fs and node:path load when a provider is made, not when agent-session is imported (a Worker has neither).
function builtin<T>(id: string): T {
  const module = nodeBuiltin<T>(id);
  if (!module) {
    throw new SessionError(
      "UNSUPPORTED",
      `FileSystemSkillProvider needs Node.js's ${id}; in a Worker keep skills in R2 (agent-session/s3) or a block store`,
    );
  }
  return module;
}
const fs = () => builtin<typeof import("node:fs/promises")>("node:fs/promises");
const path = () => builtin<typeof import("node:path")>("node:path");
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

function splitFrontMatter(text: string): { description: string | undefined; body: string } {
  const match = FRONT_MATTER.exec(text);
  if (!match) return { description: undefined, body: text };
  const line = match[1]!.split(/\r?\n/).find((l) => /^description\s*:/.test(l));
  const raw = line?.slice(line.indexOf(":") + 1).trim();
  const description = raw?.replace(/^(["'])(.*)\1$/, "$2").trim() || undefined;
  return { description, body: text.slice(match[0].length) };
}

/**
 * The header a skill file needs. Without a description none, as before, unless the content itself opens with
 * front matter: `load` would strip that as the file's header (and list its description), so an empty header
 * goes first and the content's own lines stay content. (An empty `---` pair is no header to `FRONT_MATTER`.)
 */
function frontMatterFor(content: string, description: string | undefined): string {
  if (description) return `---\ndescription: ${description.replace(/[\r\n]+/g, " ")}\n---\n`;
  return FRONT_MATTER.test(content) ? "---\ndescription:\n---\n" : "";
}

/**
 * Skills as a directory of Markdown files: the key is the path relative to the directory without `.md`, the
 * description comes from the front matter's `description:`. Keys that would leave the directory are refused.
 */
export class FileSystemSkillProvider implements SkillProvider {
  private readonly root: string;
  private readonly allowed: Set<string> | undefined;

  constructor(directory: string, options: FileSystemSkillOptions = {}) {
    if (typeof directory !== "string" || directory.length === 0) {
      throw new SessionError("INVALID_ARGUMENT", "FileSystemSkillProvider needs a directory path", {
        issues: [{ path: "directory", rule: typeof directory === "string" ? "required" : "type" }],
      });
    }
    this.root = path().resolve(directory);
    this.allowed = options.keys && options.keys.length > 0 ? new Set(options.keys) : undefined;
  }

  private fileFor(key: unknown): string {
    if (
      typeof key !== "string" ||
      key.length === 0 ||
      key.includes("\0") ||
      path().isAbsolute(key) ||
      key.includes("\\")
    ) {
      throw new SessionError("INVALID_ARGUMENT", `Invalid skill key: ${JSON.stringify(key)}`, {
        issues: [{ path: "key", rule: typeof key === "string" ? "format" : "type" }],
      });
    }
    const file = path().resolve(this.root, `${key}${EXTENSION}`);
    const rel = path().relative(this.root, file);
    if (rel.startsWith("..") || path().isAbsolute(rel) || rel.split(path().sep).includes("..")) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Skill key ${JSON.stringify(key)} is outside the skills directory`,
        { issues: [{ path: "key", rule: "format" }] },
      );
    }
    return file;
  }

  private async listKeys(dir = this.root, prefix = ""): Promise<string[]> {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await fs().readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const keys: string[] = [];
    for (const entry of entries) {
      if (entry.isDirectory())
        keys.push(...(await this.listKeys(path().join(dir, entry.name), `${prefix}${entry.name}/`)));
      else if (entry.isFile() && entry.name.endsWith(EXTENSION))
        keys.push(`${prefix}${entry.name.slice(0, -EXTENSION.length)}`);
    }
    return keys;
  }

  /** Lists skills as `- key: description` lines (null when there are none). */
  async get(): Promise<string | null> {
    const keys = (await this.listKeys()).filter((key) => !this.allowed || this.allowed.has(key)).sort();
    if (keys.length === 0) return null;
    const lines: string[] = [];
    for (const key of keys) {
      const { description } = splitFrontMatter(await fs().readFile(this.fileFor(key), "utf8"));
      lines.push(description ? `- ${key}: ${description}` : `- ${key}`);
    }
    return lines.join("\n");
  }

  /** The skill's text without its front matter; null when it does not exist or is not allowed. */
  async load(key: string): Promise<string | null> {
    const file = this.fileFor(key);
    if (this.allowed && !this.allowed.has(key)) return null;
    let real: string;
    try {
      real = await fs().realpath(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    // A symlink inside the directory must not lead the model to files outside it.
    await this.assertInside(real, key);
    return splitFrontMatter(await fs().readFile(real, "utf8")).body;
  }

  private async assertInside(real: string, key: string): Promise<void> {
    const rel = path().relative(await fs().realpath(this.root), real);
    if (rel.startsWith("..") || path().isAbsolute(rel)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Skill key ${JSON.stringify(key)} resolves outside the skills directory`,
        { issues: [{ path: "key", rule: "invalid" }] },
      );
    }
  }

  /**
   * Refuses a write whose folder resolves outside the directory (a symlinked folder inside it, `linkdir/x`). The
   * nearest existing ancestor is checked before any folder is created, so nothing is made outside either.
   */
  private async assertWritable(file: string, key: string): Promise<void> {
    await fs().mkdir(this.root, { recursive: true });
    for (let dir = path().dirname(file); ; dir = path().dirname(dir)) {
      try {
        await this.assertInside(await fs().realpath(dir), key);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || dir === this.root) throw error;
      }
    }
  }

  /** Writes a skill atomically, with the description as front matter; `load` returns `content` exactly. */
  async set(key: string, content: string, description?: string): Promise<void> {
    const file = this.fileFor(key);
    const header = frontMatterFor(content, description);
    await this.assertWritable(file, key);
    await fs().mkdir(path().dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await fs().writeFile(temp, `${header}${content}`, "utf8");
    await fs().rename(temp, file);
  }
}
