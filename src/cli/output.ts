import { once } from "node:events";
import type { Readable, Writable } from "node:stream";

/** The process streams and environment a command runs with (child processes in tests, the real ones in main). */
export interface Io {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal (the progress bar is drawn only there unless forced). */
  stderrIsTTY: boolean;
}

/** Where a command's results go: text or one JSON document on stdout, notes on stderr. */
export class Output {
  constructor(
    readonly io: Io,
    readonly json: boolean,
  ) {}

  /** Writes to stdout and waits when the pipe is full, so a huge export never piles up in memory. */
  async write(chunk: string): Promise<void> {
    if (!this.io.stdout.write(chunk)) await once(this.io.stdout, "drain");
  }

  /** One line of text output. */
  async line(text = ""): Promise<void> {
    await this.write(`${text}\n`);
  }

  /** The command's JSON result (one document, pretty-printed for people who pipe it to a file). */
  async result(value: unknown): Promise<void> {
    await this.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A note for the person at the terminal (stderr, so it never mixes with data on stdout). */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }
}

/** Pads cells into aligned columns (the last column is not padded). */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) =>
        i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - [...cell].length),
      )
      .join("  ")
      .trimEnd(),
  );
}

/** The first line of a text, shortened to `max` characters with an ellipsis. */
export function preview(text: string, max = 72): string {
  const line = text.replace(/\s+/g, " ").trim();
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, max - 1).join("")}…`;
}

/** `2025-11-21 03:42:01` from an ISO timestamp (UTC, seconds), or the input when it is not a date. */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return "-";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 19).replace("T", " ");
}

/** `12.3 kB` style sizes. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = n;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `n` and the noun, singular for one: "1 session", "2 sessions" (`plural` for nouns that do not just add an s). */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
