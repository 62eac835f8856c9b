/**
 * A checkpoint's channel versions as its `versions` column stores them (docs/LANGGRAPH.md, "Storage"): a clear text
 * column (a read finds the values it names without opening the checkpoint's bytes), once in every checkpoint row, so
 * its JSON (`{"__start__":2.123456789,"messages":3.…,"branch:to:agent":3.…}`, ~85 bytes) was a third of the raw
 * conversation on a long thread. Packed, it is `~` then `name value` entries joined by `,`:
 *
 * - a name is a code of a name every graph writes (`!s` `__start__`, `!m` `messages`, `!b` then the rest of a
 *   `branch:to:` name), or the name URI-encoded (`!` as `%21` too), so it never holds `,`, `!` at its start, or a
 *   value's mark;
 * - a value is `#` and a version as the saver's `getNextVersion` makes them (a whole number, a point and up to nine
 *   digits) in base 36: the whole number, then the nine digits (padded with zeros) in six characters; `$` and any
 *   other number as JSON writes it; `&` and a string URI-encoded.
 *
 * Versions of another kind (a number JSON cannot write, `NaN`) keep the JSON form, and so do rows written before;
 * a JSON row starts with `{`, so both read back. The dictionary and marks are frozen: a new one is a new first mark.
 */
import { SessionError } from "../../errors.js";

const MARK = "~";
const NAMES: readonly (readonly [code: string, name: string])[] = [
  ["!s", "__start__"],
  ["!m", "messages"],
];
const BRANCH = "!b";
const BRANCH_NAME = "branch:to:";
// A version as getNextVersion writes it (String of the number): whole digits, then at most nine after the point.
const SAVER_VERSION = /^(\d{1,15})(?:\.(\d{1,9}))?$/;
const FRACTION = 9;
const FRACTION_CHARS = 6; // 36^6 > 10^9

const escapeName = (name: string) => encodeURIComponent(name).replace(/!/g, "%21");

function nameOf(name: string): string {
  for (const [code, known] of NAMES) if (name === known) return code;
  if (name.startsWith(BRANCH_NAME)) return BRANCH + escapeName(name.slice(BRANCH_NAME.length));
  return escapeName(name);
}

function packedValue(value: unknown): string | undefined {
  if (typeof value === "string") return `&${encodeURIComponent(value)}`;
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const text = String(value);
  const saver = SAVER_VERSION.exec(text);
  if (!saver) return `$${JSON.stringify(value)}`;
  const fraction = Number((saver[2] ?? "").padEnd(FRACTION, "0"));
  return `#${Number(saver[1]).toString(36)}${fraction.toString(36).padStart(FRACTION_CHARS, "0")}`;
}

/** The stored text of a checkpoint's channel versions. */
export function packVersions(versions: Readonly<Record<string, unknown>>): string {
  const entries: string[] = [];
  for (const [name, value] of Object.entries(versions)) {
    const packed = packedValue(value);
    if (packed === undefined) return JSON.stringify(versions);
    entries.push(nameOf(name) + packed);
  }
  return MARK + entries.join(",");
}

const damaged = (text: string) =>
  new SessionError("STORAGE", `A checkpoint's channel versions are damaged: ${text.slice(0, 80)}`);

function readName(code: string): string {
  for (const [known, name] of NAMES) if (code === known) return name;
  if (code.startsWith(BRANCH)) return BRANCH_NAME + decodeURIComponent(code.slice(BRANCH.length));
  return decodeURIComponent(code);
}

function readValue(mark: string, body: string, text: string): string | number {
  if (mark === "&") return decodeURIComponent(body);
  if (mark === "$") return JSON.parse(body) as number;
  if (body.length <= FRACTION_CHARS) throw damaged(text);
  const whole = parseInt(body.slice(0, -FRACTION_CHARS), 36);
  const digits = String(parseInt(body.slice(-FRACTION_CHARS), 36))
    .padStart(FRACTION, "0")
    .replace(/0+$/, "");
  return Number(digits === "" ? String(whole) : `${whole}.${digits}`);
}

/** A checkpoint's channel versions from its stored text (packed, or the JSON of rows written before). */
export function unpackVersions(text: string): Record<string, string | number> {
  if (!text.startsWith(MARK)) return JSON.parse(text) as Record<string, string | number>;
  if (text.length === MARK.length) return {};
  const entries = text
    .slice(MARK.length)
    .split(",")
    .map((entry): [string, string | number] => {
      const at = entry.search(/[#$&]/);
      if (at < 0) throw damaged(text);
      try {
        return [readName(entry.slice(0, at)), readValue(entry[at] as string, entry.slice(at + 1), text)];
      } catch (error) {
        // A broken escape (URIError) or number (SyntaxError) is the same damage, said the same way.
        if (error instanceof SessionError) throw error;
        throw damaged(text);
      }
    });
  // fromEntries defines each name as an own property (a channel named `__proto__` included).
  return Object.fromEntries(entries);
}
