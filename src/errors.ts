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
  | "CLOSED"
  | "DECRYPT_FAILED";

/**
 * Why a value was refused, as a short stable id (the message says the same for humans): `required` (missing),
 * `type` (the wrong kind of value), `range` (a number or a size outside its bounds, or not whole), `too_long` (a
 * string, list or byte size over its cap), `format` (the right kind but the wrong shape: not well-formed Unicode,
 * not a single line, not an ISO time, not a hash), `one_of` (not one of the allowed values), `unknown_key` (an
 * option name that is not one), `conflict` (clashes with another field or with what exists, e.g. resume and fork
 * both given, a label already taken), `invalid` (any other rule).
 */
export type SessionIssueRule =
  | "required"
  | "type"
  | "range"
  | "too_long"
  | "format"
  | "one_of"
  | "unknown_key"
  | "conflict"
  | "invalid";

/** One refused field: its dotted `path` in the input (`messages.3.parentId`, `""` for the input itself) and the rule. */
export interface SessionIssue {
  readonly path: string;
  readonly rule: SessionIssueRule;
}

/** The one error type agent-session throws: `code` says what went wrong, `cause` keeps the underlying error. */
export class SessionError extends Error {
  readonly code: SessionErrorCode;
  /** For a refused input (by a schema or a hand-written check): which field broke which rule, the named one first. */
  readonly issues?: readonly SessionIssue[];

  constructor(
    code: SessionErrorCode,
    message: string,
    options?: { cause?: unknown; issues?: readonly SessionIssue[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SessionError";
    this.code = code;
    if (options?.issues !== undefined) this.issues = options.issues;
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
