import type { StoredCompaction } from "../../contract/message.js";
import type { SearchHit, StoreSearchOptions } from "../../contract/search.js";
import { MAX_SEARCH_CONTEXT } from "../../search/options.js";
import { preview } from "../output.js";
import { oneOf, ownerParam, timeParam, wholeParam } from "./params.js";

/** Most hits `/api/search` answers. */
export const VIEWER_SEARCH_LIMIT = 50;
/** Characters of an overlay's summary a hit carries (the whole summary is in the session's history). */
export const SUMMARY_PREVIEW_CHARS = 200;

/** The overlay a hit's `compactedBy` names, as the page shows it: its range and the start of its summary. */
export interface HitCompaction {
  id: string;
  fromMessageId: string;
  toMessageId: string;
  summary: string;
}

/** A hit as `/api/search` answers it: the store's hit, plus its overlay's range when `compactedBy` is set. */
export type ViewerHit = SearchHit & { compaction?: HitCompaction };

/**
 * The store's search options from `/api/search`'s query: `q`, `session`, `branch` (all | active), `match`
 * (any | all), `role` (repeatable), `since`, `until` (ISO-8601), `context` (0 to 10 turns) and `owner` (that
 * owner's sessions only). A bad value is
 * `INVALID_ARGUMENT` (400) naming the parameter, never a silently dropped filter.
 */
export function viewerSearchOptions(query: URLSearchParams): StoreSearchOptions {
  const session = query.get("session");
  const roles = query.getAll("role").filter((role) => role !== "");
  const options: StoreSearchOptions = { limit: VIEWER_SEARCH_LIMIT };
  const branch = oneOf(query, "branch", ["all", "active"] as const);
  const match = oneOf(query, "match", ["any", "all"] as const);
  const context = wholeParam(query, "context", 0, MAX_SEARCH_CONTEXT);
  const since = timeParam(query, "since");
  const until = timeParam(query, "until");
  const owner = ownerParam(query);
  options.branch = branch ?? "all";
  if (match !== undefined) options.match = match;
  if (context !== undefined) options.context = context;
  if (roles.length > 0) options.role = roles;
  if (since !== undefined) options.since = since;
  if (until !== undefined) options.until = until;
  if (session) options.sessionId = session;
  if (owner !== undefined) options.owner = owner;
  return options;
}

/**
 * Adds to each hit that a compaction covers (`compactedBy`) the overlay's range and the start of its summary, so
 * the page can say what replaced the hit and open it. Each session's overlays are read once.
 */
export async function withCompactions(
  hits: SearchHit[],
  overlaysOf: (sessionId: string) => Promise<StoredCompaction[]>,
): Promise<ViewerHit[]> {
  const bySession = new Map<string, Promise<Map<string, StoredCompaction>>>();
  const overlays = (sessionId: string) => {
    let found = bySession.get(sessionId);
    if (!found) {
      found = overlaysOf(sessionId).then((list) => new Map(list.map((c) => [c.id, c])));
      bySession.set(sessionId, found);
    }
    return found;
  };
  return Promise.all(
    hits.map(async (hit): Promise<ViewerHit> => {
      if (hit.compactedBy === undefined || hit.sessionId === undefined) return hit;
      const overlay = (await overlays(hit.sessionId)).get(hit.compactedBy);
      if (!overlay) return hit;
      const { id, fromMessageId, toMessageId } = overlay;
      const summary = preview(overlay.summary, SUMMARY_PREVIEW_CHARS);
      return { ...hit, compaction: { id, fromMessageId, toMessageId, summary } };
    }),
  );
}
