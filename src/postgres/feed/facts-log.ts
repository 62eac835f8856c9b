/**
 * Facts in the Postgres change log (docs/FACTS.md#recall, "Facts learned elsewhere"): a store with `changeLog`
 * records a row of kind "facts" after each fact write (add, an import that stored some), one per session the facts'
 * sources lie in, so another process's vector worker, which hears the log, embeds them. The row holds no ids, fact
 * or text; it is tied to its session as every log row is, so erasing the session deletes it with the session's other
 * rows (a row naming no session would outlive every erasure); retention prunes it as any row.
 * A SQLite file needs none: any other connection's commit moves its data version, which the watch already reads.
 */
import { emitWarning } from "../../runtime/warn.js";
import { FACTS_KIND } from "../../store/feed/change-rows.js";
import type { RemoteChanges } from "../../store/feed/remote.js";

/** What a fact store tells after storing facts (facts/store-base.ts). */
interface StoredHook {
  onStored: ((sessions: readonly string[]) => void | Promise<void>) | undefined;
}

/**
 * Records "facts" rows after every fact write of `facts`, after what `onStored` already does (the store's own
 * vector worker). Recorded after the write committed, as a duplicate append's row is: a failure is reported, never
 * thrown (the facts are stored), and a process killed in between leaves them for the next signal or a backfill.
 */
export function logFactWrites(facts: StoredHook, log: RemoteChanges): void {
  const local = facts.onStored;
  facts.onStored = async (sessions) => {
    await local?.(sessions);
    try {
      for (const sessionId of sessions) await log.record({ sessionId, type: FACTS_KIND, ids: [] });
    } catch (error) {
      emitWarning(error, "AgentSessionFeedWarning", "facts were stored but their change-log row failed");
    }
  };
}
