type WarningSink = { emitWarning?: (warning: Error, type: string) => void };

/**
 * Reports a failure nobody awaits (a listener or hook that threw, a change-log row that could not be written) as a
 * process warning; a Worker has no `process`, so there it goes to `console.warn` instead of throwing a ReferenceError.
 */
export function emitWarning(error: unknown, type: string): void {
  const warning = error instanceof Error ? error : new Error(String(error));
  const sink = (globalThis as { process?: WarningSink }).process;
  if (typeof sink?.emitWarning === "function") sink.emitWarning(warning, type);
  else console.warn(`${type}: ${warning.message}`);
}
