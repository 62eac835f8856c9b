import { SessionError } from "../errors.js";

/** A failure the CLI reports as one line and exit code 1 (bad data, a missing session, an unreachable server). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code = "ERROR",
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Bad arguments: exit code 2 and a pointer to the command's `--help`. */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message, "USAGE", 2);
    this.name = "UsageError";
  }
}

/** What a command says when a store holds encrypted owners and it was given no keyring. */
export const KEYRING_NEEDED = "this store holds encrypted owners: pass --keyring or --master-key-file";

/**
 * The code and the one-line message of any error, with the help hint for usage errors. A store's `DECRYPT_FAILED`
 * says its plain cause: no keyring was given (`keyed` false), or the one given lacks the key.
 */
export function describeError(
  error: unknown,
  keyed = false,
): { code: string; message: string; exitCode: number } {
  const described = describeAny(error);
  if (described.code !== "DECRYPT_FAILED" || described.message.includes(KEYRING_NEEDED)) return described;
  const message = keyed
    ? `${described.message} (the keyring given does not hold the key this data is sealed under)`
    : `${KEYRING_NEEDED} (${described.message})`;
  return { ...described, message };
}

function describeAny(error: unknown): { code: string; message: string; exitCode: number } {
  if (error instanceof UsageError) {
    const help = error.command ? `agent-session ${error.command} --help` : "agent-session --help";
    return { code: error.code, message: `${error.message} (see '${help}')`, exitCode: error.exitCode };
  }
  if (error instanceof CliError)
    return { code: error.code, message: error.message, exitCode: error.exitCode };
  if (error instanceof SessionError) return { code: error.code, message: error.message, exitCode: 1 };
  const message = error instanceof Error ? error.message : String(error);
  // Errors from drivers may span lines (SQL, stack-like details); the CLI promises one line.
  return { code: "ERROR", message: message.replace(/\s*\n\s*/g, " "), exitCode: 1 };
}
