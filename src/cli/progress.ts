import cliProgress from "cli-progress";
import type { Io } from "./output.js";

/** A progress display for a long operation; a no-op when progress is off. */
export interface Progress {
  increment(step?: number): void;
  /** Grows the total when more work is discovered (e.g. a file read as it goes). */
  setTotal(total: number): void;
  stop(): void;
}

const NONE: Progress = { increment() {}, setTotal() {}, stop() {} };

/** Whether to draw a bar: forced with `--progress`, off with `--no-progress`, else only on a terminal. */
export function progressEnabled(io: Io, values: Record<string, unknown>): boolean {
  if (values["no-progress"] === true) return false;
  return values.progress === true || io.stderrIsTTY;
}

/**
 * A cli-progress bar on stderr (stdout may carry an export). When forced onto a non-terminal it prints a line
 * every half second instead of redrawing in place.
 */
export function startProgress(
  io: Io,
  enabled: boolean,
  label: string,
  total: number,
  unit: string,
): Progress {
  if (!enabled) return NONE;
  const bar = new cliProgress.SingleBar(
    {
      stream: io.stderr,
      format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted}`,
      hideCursor: io.stderrIsTTY ? true : null,
      noTTYOutput: !io.stderrIsTTY,
      notTTYSchedule: 500,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(total, 1), 0);
  return {
    increment: (step = 1) => bar.increment(step),
    setTotal: (next: number) => bar.setTotal(Math.max(next, 1)),
    stop: () => bar.stop(),
  };
}
