import { parseArgs } from "node:util";
import { isOwnerId, MAX_OWNER_BYTES } from "../store/owner.js";
import { UsageError } from "./errors.js";

/** One option of a command, as `node:util` parseArgs takes it plus what `--help` prints. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** Placeholder in the help, e.g. `<id>`. */
  value?: string;
  description: string;
}

/** What a command accepts. */
export interface ArgSpec {
  /** Positional placeholders for the help line, e.g. `["<session>"]`; a last one with `…` accepts any number. */
  positionals: string[];
  /** How many positionals are required. */
  required: number;
  options: Record<string, OptionSpec>;
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  db: {
    type: "string",
    value: "<path|url>",
    description: "SQLite file or postgres:// URL (default $AGENT_SESSION_DB or ./agent-session.db)",
  },
  schema: {
    type: "string",
    value: "<name>",
    description: "Postgres: the schema holding the tables (default: the connection's search_path)",
  },
  "table-prefix": {
    type: "string",
    value: "<prefix>",
    description: "Postgres: the prefix of every table name, as the store's tablePrefix option",
  },
  keyring: {
    type: "string",
    value: "<module>",
    description:
      "a JavaScript module exporting the app's Keyring (named `keyring` or default): encrypted owners",
  },
  "master-key-file": {
    type: "string",
    value: "<file>",
    description:
      "a file holding the master key of masterKeyring (32 bytes: raw, hex or base64): encrypted owners",
  },
  json: { type: "boolean", description: "machine-readable JSON on stdout" },
  progress: {
    type: "boolean",
    description: "force the progress bar (default: only when stderr is a terminal)",
  },
  "no-progress": { type: "boolean", description: "never draw the progress bar" },
  help: { type: "boolean", short: "h", description: "show help" },
};

const VALUED_GLOBALS = new Set(
  Object.entries(GLOBAL_OPTIONS)
    .filter(([, o]) => o.type === "string")
    .map(([name]) => `--${name}`),
);

/** Parsed arguments of one command. */
export interface ParsedArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** Splits argv into the command name and the rest; global options may come before the command. */
export function splitCommand(argv: readonly string[]): { command: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") return { command: argv[i + 1], rest: [...argv.slice(0, i), ...argv.slice(i + 2)] };
    if (!token.startsWith("-") || token === "-") {
      return { command: token, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
    }
    // The global options with a separate value; skip the value so it is not taken for the command.
    if (VALUED_GLOBALS.has(token)) i++;
  }
  return { command: undefined, rest: [...argv] };
}

/** Parses a command's arguments strictly; every mistake becomes a {@link UsageError} naming the command. */
export function parseCommandArgs(command: string, spec: ArgSpec, argv: readonly string[]): ParsedArgs {
  const options = { ...GLOBAL_OPTIONS, ...spec.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: joinDashValues(argv, options),
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          o.short ? { type: o.type, short: o.short } : { type: o.type },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error), command);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return { positionals: parsed.positionals, values };
  const variadic = spec.positionals.at(-1)?.includes("…") ?? false;
  if (parsed.positionals.length < spec.required) {
    const missing = spec.positionals[parsed.positionals.length] ?? "an argument";
    throw new UsageError(`${command} needs ${missing.replace(/…$/, "")}`, command);
  }
  if (!variadic && parsed.positionals.length > spec.positionals.length) {
    const extra = parsed.positionals[spec.positionals.length]!;
    throw new UsageError(`${command} got an unexpected argument ${JSON.stringify(extra)}`, command);
  }
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === "string" && value.length === 0)
      throw new UsageError(`--${name} needs a value`, command);
  }
  return { positionals: parsed.positionals, values };
}

/**
 * `--older-than -5d` and `--limit -1`: parseArgs takes a value starting with a dash for a forgotten value and says
 * it is missing. No option name starts with a digit, so such a value is joined to its option (`--limit=-1`) and
 * the command's own check says what is wrong with it.
 */
function joinDashValues(argv: readonly string[], options: Record<string, OptionSpec>): string[] {
  const valued = new Set<string>();
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== "string") continue;
    valued.add(`--${name}`);
    if (o.short) valued.add(`-${o.short}`);
  }
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      joined.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    if (valued.has(token) && next !== undefined && /^-\d/.test(next)) {
      // `--limit=-1`; a short option takes its value attached (`-o-1`, not `-o=-1`).
      joined.push(token.startsWith("--") ? `${token}=${next}` : `${token}${next}`);
      i++;
    } else joined.push(token);
  }
  return joined;
}

// parseArgs' messages are long and suggest `--` tricks; the CLI says what was wrong in a few words.
function parseArgsMessage(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-[^']*)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown option ${option ?? message}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return message.includes("does not take an argument")
      ? `option ${option ?? "?"} does not take a value`
      : `option ${option?.split(" ")[0] ?? "?"} needs a value`;
  }
  return message.split("\n")[0] ?? message;
}

/** Reads a whole number option (`--limit 20`), or the default when it is absent. */
export function intOption(
  command: string,
  values: ParsedArgs["values"],
  name: string,
  fallback: number,
): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new UsageError(`--${name} must be a whole number >= 0, got ${JSON.stringify(raw)}`, command);
  }
  return value;
}

/** The `--owner <id>` option of the commands that can keep to one owner's sessions. */
export const OWNER_OPTION: OptionSpec = {
  type: "string",
  value: "<id>",
  description: "only the sessions registered with this owner (see docs/MANAGER.md, Owners)",
};

/** The `--owner` value, checked as the library checks an owner id, when given. */
export function ownerOption(command: string, values: ParsedArgs["values"]): string | undefined {
  const value = stringOption(values, "owner");
  if (value === undefined || isOwnerId(value)) return value;
  throw new UsageError(
    `--owner must be a non-empty string of at most ${MAX_OWNER_BYTES} bytes without control characters`,
    command,
  );
}

/** The value of a string option, when given. */
export function stringOption(values: ParsedArgs["values"], name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}
