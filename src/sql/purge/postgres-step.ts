/**
 * How a Postgres purge's statement that waited too long becomes a step left undone (store/purge.ts, PurgeRecorder)
 * rather than a failure: the purge that holds the lock does the same work, and the next purge does what is left.
 */
import { sqlState } from "../engines/postgres/client.js";

/** `lock_timeout` expired. */
export const LOCK_NOT_AVAILABLE = "55P03";
/** The deadlock detector chose this statement. */
export const DEADLOCK = "40P01";
/** The object is in use (another purge's statement on the same relation). */
export const OBJECT_IN_USE = "55006";
/** `statement_timeout` expired (or the statement was cancelled). */
export const QUERY_CANCELED = "57014";

/**
 * Runs a statement; a lock not granted in time (another purge, a long transaction) is what the step leaves
 * undone rather than a failure, since the purge that holds the lock does the same work.
 */
export async function step(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run();
    return undefined;
  } catch (error) {
    const state = sqlState(error);
    if (state === LOCK_NOT_AVAILABLE || state === DEADLOCK || state === OBJECT_IN_USE) {
      return `not run: ${(error as Error).message}`;
    }
    throw error;
  }
}
