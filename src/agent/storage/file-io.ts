import { randomBytes } from "node:crypto";
import { link, open, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";

/** True for "file does not exist". */
export function isMissing(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "ENOENT";
}

/** Removes a file; a file that is already gone is fine. */
export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

/** The first `bytes` bytes of a file as text, or undefined when it does not exist. */
export async function readHead(
  path: string,
  bytes: number,
): Promise<{ head: string; size: number } | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    const { size } = await handle.stat();
    return { head: buffer.subarray(0, bytesRead).toString("utf8"), size };
  } finally {
    await handle.close();
  }
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename itself durable; some platforms cannot open a directory, which only costs that guarantee.
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}

/**
 * Replaces `path` atomically: readers see the old file or the new one, never a torn mix, because the text is
 * written (and flushed, with `sync`) to a temporary sibling that is then renamed over the target.
 */
export async function writeAtomic(path: string, text: string, sync: boolean): Promise<void> {
  const dir = dirname(path);
  const temporary = await writeTemporary(dir, text, sync);
  try {
    await rename(temporary, path);
  } catch (error) {
    await removeFile(temporary);
    throw error;
  }
  if (sync) await syncDirectory(dir);
}

/**
 * Like {@link writeAtomic}, but only when `path` does not exist: the complete file is hard-linked into place, which
 * fails with EEXIST atomically (even across processes), so readers never see a partial file. Returns false when
 * `path` existed (nothing written).
 */
export async function writeExclusive(path: string, text: string, sync: boolean): Promise<boolean> {
  const dir = dirname(path);
  const temporary = await writeTemporary(dir, text, sync);
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as { code?: unknown })?.code === "EEXIST") return false;
    throw error;
  } finally {
    await removeFile(temporary);
  }
  if (sync) await syncDirectory(dir);
  return true;
}

async function writeTemporary(dir: string, text: string, sync: boolean): Promise<string> {
  const temporary = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, "w");
  try {
    await handle.writeFile(text, "utf8");
    if (sync) await handle.sync();
  } catch (error) {
    await handle.close();
    await removeFile(temporary);
    throw error;
  }
  await handle.close();
  return temporary;
}

/** Appends text to a file (created when missing), flushed to the device with `sync`; returns the new size. */
export async function appendText(path: string, text: string, sync: boolean): Promise<number> {
  const handle = await open(path, "a");
  try {
    await handle.write(text);
    if (sync) await handle.datasync();
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}
