import type { Readable } from "node:stream";
import { CliError } from "../errors.js";

/** Default longest line an import reads (128 MiB): far above any row a store accepts, far below V8's string limit. */
export const DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024;

/**
 * The lines of a UTF-8 stream (`\n` or `\r\n` endings), never holding more than `maxBytes` of one line: a longer
 * line is an error naming its number instead of a raw `RangeError` from a giant string (a 512 MiB line crashed
 * readline). Invalid UTF-8 is an error too, rather than silently becoming U+FFFD.
 */
export async function* readLines(input: Readable, maxBytes = DEFAULT_MAX_LINE_BYTES): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let parts: Buffer[] = [];
  let size = 0;
  let line = 0;
  const finish = (): string => {
    line++;
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    try {
      return decoder.decode(bytes.subarray(0, end));
    } catch {
      throw new CliError(`line ${line}: not valid UTF-8`, "INVALID_FILE");
    }
  };
  const add = (piece: Buffer) => {
    size += piece.length;
    if (size > maxBytes) {
      throw new CliError(
        `line ${line + 1} is longer than ${maxBytes} bytes, the most an import reads in one line (--max-line-bytes)`,
        "INVALID_FILE",
      );
    }
    if (piece.length > 0) parts.push(piece);
  };
  for await (const chunk of input) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : (chunk as Buffer);
    let start = 0;
    for (let nl = buffer.indexOf(0x0a, start); nl !== -1; nl = buffer.indexOf(0x0a, start)) {
      add(buffer.subarray(start, nl));
      yield finish();
      start = nl + 1;
    }
    add(buffer.subarray(start));
  }
  if (size > 0) yield finish();
}
