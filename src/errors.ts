/** Machine-readable reasons a Session operation can fail. */
export type SessionErrorCode =
  | "INVALID_MESSAGE"
  | "INVALID_ARGUMENT"
  | "RESERVED_ID"
  | "PARENT_NOT_FOUND"
  | "NOT_FOUND"
  | "CONFLICT"
  | "UNSUPPORTED"
  | "READONLY"
  | "TOKEN_LIMIT"
  | "TOO_LARGE"
  | "COMPACTION_REFUSED"
  | "MISSING_DEPENDENCY"
  | "STORAGE"
  | "CLOSED";

/** The one error type agent-session throws: `code` says what went wrong, `cause` keeps the underlying error. */
export class SessionError extends Error {
  readonly code: SessionErrorCode;

  constructor(code: SessionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SessionError";
    this.code = code;
  }
}

/** Thrown when a storage engine fails (I/O, constraint, lock); the driver's error is the `cause`. */
export class StorageError extends SessionError {
  constructor(message: string, cause?: unknown) {
    super("STORAGE", message, { cause });
    this.name = "StorageError";
  }
}

/** Thrown when an optional peer dependency is needed but not installed. */
export class MissingDependencyError extends SessionError {
  readonly dependency: string;

  /** `hint` follows the install command: what does without the package, where something does. */
  constructor(dependency: string, feature: string, cause?: unknown, hint?: string) {
    super(
      "MISSING_DEPENDENCY",
      `${feature} needs the "${dependency}" package: npm install ${dependency}${hint === undefined ? "" : `; ${hint}`}`,
      { cause },
    );
    this.name = "MissingDependencyError";
    this.dependency = dependency;
  }
}

/** Renders any thrown value as a one-line message (for tool results and logs); never throws. */
export function errorMessage(error: unknown): string {
  // It runs inside catch blocks that promise not to throw: a `message` getter that throws, a Proxy whose traps
  // throw or a throwing `toJSON` must not turn the report of one failure into a second one.
  try {
    if (typeof error === "string") return error;
    if (error instanceof Error) {
      const message: unknown = error.message;
      return typeof message === "string" ? message : String(message);
    }
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      // A null-prototype object or a throwing toString: still a message, never a second error.
      return "unknown error";
    }
  }
}
