import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { lstat, readlink, realpath, rename, rm, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { CliError } from "../errors.js";

/** A file being written: `write` chunks, then `commit` (it appears whole) or `abort` (nothing is left). */
export interface OutputFile {
  write(chunk: string): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Opens `--output` the way a shell's `>` would treat the path, but without leaving a partial file: a regular
 * file (or a new one) is written to a temporary file beside it and renamed onto it; through a symlink, that
 * happens beside the link's target, so the link stays a link; a FIFO, a device or a socket is written directly (a
 * rename would replace it with a plain file); a directory is refused.
 */
export async function openOutputFile(path: string): Promise<OutputFile> {
  const target = await resolveLinks(path);
  const existing = await stat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new CliError(`${path} is a directory`, "INVALID_ARGUMENT");
  const direct = existing !== undefined && !existing.isFile();
  const written = direct ? target : `${target}.tmp-${process.pid}`;
  const stream = await openStream(written, path);
  return {
    async write(chunk) {
      if (!stream.write(chunk)) await once(stream, "drain");
    },
    async commit() {
      stream.end();
      await once(stream, "finish");
      if (!direct) await rename(written, target);
    },
    async abort() {
      stream.destroy();
      if (!direct) await rm(written, { force: true });
    },
  };
}

// The path a chain of symlinks ends at; a dangling link ends at the missing path it names (created there).
async function resolveLinks(path: string): Promise<string> {
  let current = resolve(path);
  for (let hops = 0; hops < 40; hops++) {
    const info = await lstat(current).catch(() => undefined);
    if (!info?.isSymbolicLink()) return info ? realpath(current) : current;
    current = resolve(dirname(current), await readlink(current));
  }
  throw new CliError(`${path}: too many levels of symbolic links`, "INVALID_ARGUMENT");
}

// Opening errors (a socket, no permission, a missing directory) become one line naming the path given.
async function openStream(file: string, shown: string): Promise<WriteStream> {
  const stream = createWriteStream(file);
  try {
    await once(stream, "open");
  } catch (error) {
    // "ENOENT: no such file or directory, open '…/x.tmp-123'": the part before the temporary name.
    const reason = (error as Error).message.split(", open")[0];
    throw new CliError(`cannot write ${shown}: ${reason}`, "INVALID_ARGUMENT");
  }
  return stream;
}
