import { SessionError } from "../errors.js";
import { utf8Length } from "../runtime/bytes.js";
import { byteCap } from "../schema/limits.js";
import { parseInput } from "../schema/parse.js";

/**
 * The most bytes (UTF-8 JSON) of the page's content one chat request may store by default: its new user messages
 * and tool results. 8 MiB holds a few photos attached as data URLs; the posted copies of stored messages are not
 * counted.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;

const maxRequestBytes = byteCap("maxRequestBytes");

/** Counts what a chat request would store from the page; past the limit it is `TOO_LARGE`, before anything is written. */
export class RequestBytes {
  readonly max: number;
  private total = 0;

  constructor(max: number | undefined) {
    this.max =
      max === undefined
        ? DEFAULT_MAX_REQUEST_BYTES
        : parseInput(maxRequestBytes, max, { path: "maxRequestBytes" });
  }

  /** Adds the JSON of `value` (what the page wrote for `what`, e.g. `message "u2"`); throws past the limit. */
  add(what: string, value: unknown): void {
    if (value === undefined || this.max === Number.POSITIVE_INFINITY) return;
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      throw new SessionError(
        "INVALID_MESSAGE",
        `The page posted ${what} that is not JSON: ${error instanceof Error ? error.name : "error"}`,
        { issues: [{ path: "", rule: "invalid" }] },
      );
    }
    const bytes = utf8Length(json);
    this.total += bytes;
    if (this.total > this.max) {
      throw new SessionError(
        "TOO_LARGE",
        `This chat request would store ${this.total} bytes of JSON from the page (${what}: ${bytes}), over the ` +
          `limit of ${this.max} (maxRequestBytes)`,
        { issues: [{ path: "", rule: "too_long" }] },
      );
    }
  }
}
