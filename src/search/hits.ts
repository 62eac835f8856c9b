/**
 * The hits a search hands out: each built-in store's result made one way (`hitResult`), and the exact hits
 * (`SearchHit`) with each result's 1-based position in the page as its `rank`. The built-in stores set every other
 * field themselves, so one missing here is a bug of the backend, not of the data.
 */
import type { SessionMessage } from "../contract/message.js";
import type { FactSearchHit, SearchHit, SearchItem, SearchResult } from "../contract/search.js";
import { SessionError } from "../errors.js";

/** What a built-in store knows of a hit when it makes its result (the text is the message's searchable text). */
export interface HitFields {
  id: string;
  role: SearchResult["role"];
  content: string;
  createdAt: string;
  sessionId: string;
  onActivePath: boolean;
}

/**
 * A hit's result as every built-in store makes it: `fields` (taken as the result, not copied: one page's hits are
 * made for one search), with its score when the search has one for it.
 */
export function hitResult(fields: HitFields, score: number | undefined): SearchResult {
  const result: SearchResult = fields;
  if (score !== undefined) result.score = score;
  return result;
}

/** The built-in stores' page as exact hits, ranked in page order (`STORAGE` for a field the backend left out). */
export function rankedHits(results: SearchResult[]): SearchHit[] {
  return results.map((result, i) => {
    const { createdAt, sessionId, score } = result;
    if (typeof createdAt !== "string" || typeof sessionId !== "string" || typeof score !== "number") {
      throw new SessionError(
        "STORAGE",
        `search hit ${JSON.stringify(result.id)} lacks ${missing(result).join(", ")}: a bug of the backend`,
      );
    }
    // Set on the result itself (one page, made for this search): a copy of each hit would double its allocations.
    return Object.assign(result, { createdAt, sessionId, score, rank: i + 1 });
  });
}

function missing({ createdAt, sessionId, score }: SearchResult): string[] {
  const names: string[] = [];
  if (typeof createdAt !== "string") names.push("createdAt");
  if (typeof sessionId !== "string") names.push("sessionId");
  if (typeof score !== "number") names.push("score");
  return names;
}

/**
 * A provider's hits as `Session.search` hands them out: ranked in the provider's order, and the fields a provider
 * of another library may leave out (the reference's results are `{ id, role, content, createdAt? }`) filled by a
 * documented rule — the session's own id, a time given as a Date in ISO form, `""` for no time, 0 for no score.
 */
export function sessionHits<M extends SessionMessage>(
  results: readonly SearchResult<M>[],
  sessionId: string,
): SearchItem<M>[] {
  return results.map((result, i) => {
    const rank = i + 1;
    // A fact (a search that asked for `facts: "hits"`, search/facts.ts) is the store's own, already exact.
    if ((result as { kind?: unknown }).kind === "fact") return result as unknown as FactSearchHit;
    if (isExact(result, rank)) return result;
    const time: unknown = result.createdAt;
    return {
      ...result,
      createdAt: typeof time === "string" ? time : time instanceof Date ? isoOf(time) : "",
      sessionId: typeof result.sessionId === "string" ? result.sessionId : sessionId,
      score: typeof result.score === "number" ? result.score : 0,
      rank,
    };
  });
}

function isExact<M extends SessionMessage>(result: SearchResult<M>, rank: number): result is SearchHit<M> {
  return (
    typeof result.createdAt === "string" &&
    typeof result.sessionId === "string" &&
    typeof result.score === "number" &&
    (result as Partial<SearchHit<M>>).rank === rank
  );
}

/** A Date's ISO form; `""` for an invalid one (toISOString throws on it). */
function isoOf(date: Date): string {
  return Number.isNaN(date.getTime()) ? "" : date.toISOString();
}
