type WarningSink = { emitWarning?: (warning: Error) => void };

/**
 * Reports something nobody awaits (a listener or hook that threw, a change-log row that could not be written, a
 * store opened without adopting) as a process warning named `type`, so an app can filter or collect them with
 * `process.on("warning")` (`warning.name === type`); `context`, when given, leads the message, and the original
 * error is the warning's `cause`. A Worker has no `process`, so there it goes to `console.warn` instead of throwing
 * a ReferenceError.
 */
export function emitWarning(error: unknown, type: string, context?: string): void {
  const message = error instanceof Error ? error.message : String(error);
  // A new Error: Node ignores the type of an Error it is given (it would print "Error: …"), and the caller's error
  // keeps its own name.
  const warning = new Error(context === undefined ? message : `${context}: ${message}`, {
    ...(error instanceof Error ? { cause: error } : {}),
  });
  warning.name = type;
  const sink = (globalThis as { process?: WarningSink }).process;
  if (typeof sink?.emitWarning === "function") sink.emitWarning(warning);
  else console.warn(`${type}: ${warning.message}`);
}

/**
 * Hands a failure nobody awaits to an app's handler; without one, or when the handler throws or rejects, the
 * failure (or the handler's own error) becomes a warning named `type`, so a faulty handler never turns a background
 * failure into an unhandled rejection.
 */
export function reportTo(
  handler: (() => unknown) | undefined,
  error: unknown,
  type: string,
  context?: string,
): void {
  if (handler) {
    try {
      const answer = handler();
      if (answer instanceof Promise) answer.catch((late: unknown) => emitWarning(late, type, context));
      return;
    } catch (handlerError) {
      error = handlerError;
    }
  }
  emitWarning(error, type, context);
}
