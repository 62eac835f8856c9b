import type { MessageRead } from "../../sql/engines/postgres/layout.js";

/** How often a message the log names is read again before it counts as deleted, and the first pause (ms). */
const TRIES = 3;
const PAUSE_MS = 20;

/**
 * The change log's read of a logged message on a cluster (docs/POSTGRES.md, "The change feed on a cluster"). Writes
 * there commit by two-phase commit: the coordinator commits the log row first and the workers' `COMMIT PREPARED`
 * follows, so a message not found may be one not visible yet rather than one deleted since. It is read again a few times, at growing pauses (120 ms in all), before the event is skipped as deleted.
 */
export function settledRead<M>(read: MessageRead<M>): MessageRead<M> {
  return async (sessionId, id) => {
    for (let attempt = 1; ; attempt++) {
      const message = await read(sessionId, id);
      if (message || attempt > TRIES) return message;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * attempt));
    }
  };
}
