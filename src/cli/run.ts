import { createRequire } from "node:module";
import type { VectorStoreOptions } from "../search/vectors/types.js";
import type { Keyring } from "../store/crypto/keyring.js";
import { type ParsedArgs, parseCommandArgs, splitCommand, stringOption } from "./args.js";
import type { CommandContext } from "./command.js";
import { findCommand, unknownCommand } from "./commands/index.js";
import { describeError, KEYRING_NEEDED, UsageError } from "./errors.js";
import { commandHelp, programHelp } from "./help.js";
import { holdsOwnerKeys, loadKeyring } from "./keyring.js";
import { type Io, Output } from "./output.js";
import { progressEnabled } from "./progress.js";
import {
  DEFAULT_DB,
  isPostgresUrl,
  type OpenedStore,
  type OpenMode,
  openStore,
  type TableLocation,
} from "./store.js";

function version(): string {
  // src/cli and dist/cli are both two levels below the package root.
  return (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
}

/**
 * Runs the CLI with the given arguments and streams; resolves to the exit code (0 ok, 1 failure, 2 bad
 * arguments). Every failure is reported as one line on stderr (a JSON object with `--json`).
 */
export async function run(
  argv: readonly string[],
  io: Io,
  untilStopped: () => Promise<void>,
): Promise<number> {
  const wantsJson = argv.includes("--json");
  const opened: OpenedStore[] = [];
  // Whether a store was opened with a keyring: a DECRYPT_FAILED then means a wrong key, not a missing keyring.
  let keyed = false;
  try {
    const { command: name, rest } = splitCommand(argv);
    if (name === undefined) {
      const asked = rest.includes("--version")
        ? `${version()}\n`
        : rest.some((a) => a === "--help" || a === "-h")
          ? programHelp()
          : undefined;
      if (asked !== undefined) {
        io.stdout.write(asked);
        return 0;
      }
      io.stderr.write(programHelp());
      return 2;
    }
    if (name === "help") {
      const topic = rest.find((arg) => !arg.startsWith("-"));
      const command = topic === undefined ? undefined : findCommand(topic);
      if (topic !== undefined && !command) throw new UsageError(unknownCommand(topic));
      io.stdout.write(command ? commandHelp(command) : programHelp());
      return 0;
    }
    const command = findCommand(name);
    if (!command) throw new UsageError(unknownCommand(name));
    const args = parseCommandArgs(name, command, rest);
    if (args.values.help) {
      io.stdout.write(commandHelp(command));
      return 0;
    }
    const db = stringOption(args.values, "db") ?? io.env.AGENT_SESSION_DB ?? DEFAULT_DB;
    const tables = tableLocation(name, db, args.values);
    const appKeyring = await loadKeyring(name, args.values);
    const context: CommandContext = {
      command: name,
      args,
      io,
      db,
      out: new Output(io, args.values.json === true),
      progress: progressEnabled(io, args.values),
      untilStopped,
      keyring: appKeyring,
      async open(mode: OpenMode, vectors?: VectorStoreOptions, keyring: Keyring | undefined = appKeyring) {
        const store = await openStore(db, mode, tables, vectors, keyring);
        opened.push(store);
        keyed ||= keyring !== undefined;
        // Said once, before anything is read: what follows (a refusal, or a search of text in clear only) is why.
        if (keyring === undefined && (await holdsOwnerKeys(store)))
          io.stderr.write(`agent-session: note: ${KEYRING_NEEDED} to read, search or write their data\n`);
        return store;
      },
    };
    await command.run(context);
    return 0;
  } catch (error) {
    const { code, message, exitCode } = describeError(error, keyed);
    io.stderr.write(
      wantsJson ? `${JSON.stringify({ error: { code, message } })}\n` : `agent-session: ${message}\n`,
    );
    if (io.env.AGENT_SESSION_DEBUG && error instanceof Error && error.stack)
      io.stderr.write(`${error.stack}\n`);
    return exitCode;
  } finally {
    for (const store of opened) await store.close().catch(() => undefined);
  }
}

// `--schema` and `--table-prefix` name Postgres tables; on a SQLite file they would be silently ignored.
function tableLocation(command: string, db: string, values: ParsedArgs["values"]): TableLocation {
  const schema = stringOption(values, "schema");
  const tablePrefix = stringOption(values, "table-prefix");
  if ((schema !== undefined || tablePrefix !== undefined) && !isPostgresUrl(db)) {
    const given = schema !== undefined ? "--schema" : "--table-prefix";
    throw new UsageError(`${given} applies to a postgres:// database only`, command);
  }
  return {
    ...(schema !== undefined ? { schema } : {}),
    ...(tablePrefix !== undefined ? { tablePrefix } : {}),
  };
}
