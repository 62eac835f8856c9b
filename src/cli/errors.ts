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

/** The code and the one-line message of any error, with the help hint for usage errors. */
export function describeError(error: unknown): { code: string; message: string; exitCode: number } {
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
