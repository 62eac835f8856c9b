/**
 * The one-time cleanup of facts stored before every write checked its sources (store/fact-sources.ts): a source
 * that names a message the store does not hold goes, as if that message had been deleted, and a fact left without
 * a source goes with it (its chain re-linked, steps.ts forgetMessageFacts). Run by a migration of each SQL engine
 * (sqlite/schema.ts, postgres/schema.ts), in its transaction. Reads the sources' `(session_id, message_id)` index a
 * page of sessions at a time, then each session's named messages against its stored ones.
 */
import type { Program, Row } from "../program.js";
import { type FactStatements, forgetMessageFacts } from "./steps.js";

// Sessions read per statement.
const PAGE = 500;

/** Drops every fact source naming a message not stored, and the facts left without one: how many facts went. */
export function* forgetDanglingSources(s: FactStatements): Program<number> {
  let gone = 0;
  for (let after: string | null = null; ; ) {
    const rows: Row[] = yield s.sourceSessions(after, PAGE);
    const page = rows.map((r) => String(r.session_id));
    for (const sessionId of page) {
      const sources: Row[] = yield s.sourceMessages(sessionId);
      const named = sources.map((r) => String(r.message_id));
      const stored: Row[] = yield s.stored(sessionId, named);
      const held = new Set(stored.map((r) => String(r.id)));
      const dangling = named.filter((id) => !held.has(id));
      if (dangling.length > 0) gone += yield* forgetMessageFacts(s, sessionId, dangling);
    }
    if (page.length < PAGE) return gone;
    after = page[page.length - 1]!;
  }
}
