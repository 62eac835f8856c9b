/**
 * Message search on the memory backend, by brute force over the rows in scope: ranked recall (search/pipeline.ts
 * over the source here, with BM25 weights counted from each row's own terms), or every word required
 * (`match: "all"`). The reference semantics the SQL backends are tested against (test/search-differential.test.ts).
 */

import type { SearchContextTurn, SearchResult } from "../contract/search.js";
import { storedMessageAuthor } from "../message/author.js";
import { contextOverBudget, SEARCH_CONTEXT_BYTES } from "../search/context.js";
import { messageRecallTerms, timeTermCount } from "../search/date-terms.js";
import { hitResult } from "../search/hits.js";
import type { QueryLimits } from "../search/limits.js";
import { hasFilters, passesFilters, type SearchPlan } from "../search/options.js";
import { type Channels, type RecallSource, recall, scoresOf } from "../search/pipeline.js";
import { parseQuery, type QueryTerm } from "../search/query.js";
import { bm25Weight, idf, rankCandidates, TEXTLESS_RUN } from "../search/rank.js";
import { rankAllWords, termCounter } from "../search/score.js";
import {
  activePath,
  type MemoryMessageRow as Row,
  rowTerms,
  rowTimes,
  type MemorySessionData as SessionData,
} from "./data.js";
import { markPage } from "./overlay-marks.js";

interface Scoped {
  row: Row;
  sessionId: string;
  data: SessionData;
  onPath: boolean;
  /** The session's active path, made once per session (context turns follow it). */
  active: ReadonlySet<Row>;
}

/** The rows a search sees (a branch outside it takes no part at all), in session order and by seq. */
interface Scope {
  rows: Scoped[];
  bySeq: Map<number, Scoped>;
  /** The rows by session and id, made by the first fact source looked up (search/facts.ts). */
  byId?: Map<string, Map<string, number>>;
}

/** Searches the sessions of a memory store as `plan` says (`channels`: the vector and fact channels, fused in). */
export function searchMemory(
  sessions: ReadonlyMap<string, SessionData>,
  query: string,
  plan: SearchPlan,
  limits: QueryLimits,
  channels: Channels = {},
): SearchResult[] {
  if (plan.match === "any")
    return (
      recall(memorySource(sessions), messageRecallTerms(query, limits, undefined, plan.times), plan, {
        ...channels,
        query,
      }) ?? []
    );
  const terms = parseQuery(query, limits);
  if (terms.length === 0 || plan.limit === 0) return [];
  const ranked = rankAllWords(
    rowsInScope(sessions, plan),
    terms,
    ({ row }) => rowTerms(row),
    ({ row }) => row.seq,
  );
  return hitsOf(ranked, plan);
}

/** Ranked recall's source on the memory backend: every row in scope is read, none is indexed. */
function memorySource(
  sessions: ReadonlyMap<string, SessionData>,
): RecallSource<Scope, QueryTerm[], SearchResult[]> {
  return {
    scope: (plan) => {
      const rows = rowsInScope(sessions, plan);
      const bySeq = new Map<number, Scoped>();
      for (const item of rows) bySeq.set(item.row.seq, item);
      return { rows, bySeq };
    },
    // Every row in scope is a candidate: the ranking matches the terms itself, and nothing is read again.
    read: (terms) => terms,
    rank: (terms, scope, _plan, top) => {
      const ranked = rankRecall(scope, terms, top);
      return { ranked, scores: scoresOf(ranked) };
    },
    // The filters act on the page, so a filtered search ranks every candidate.
    pageMaySkip: (plan) => hasFilters(plan),
    fusesNear: (seq, scope) => scope.bySeq.has(seq),
    authorsOf: (seqs, scope) => {
      const authors = new Map<number, string>();
      for (const seq of seqs) {
        const author = storedMessageAuthor(scope.bySeq.get(seq)?.row.json);
        if (author !== undefined) authors.set(seq, author);
      }
      return authors;
    },
    // The scope holds only what the search sees (its sessions, their active paths), so a source outside is no row.
    seqOf: ({ sessionId, messageId }, scope) => {
      if (scope.byId === undefined) {
        scope.byId = new Map();
        for (const { row, sessionId: sid } of scope.rows) {
          const ids = scope.byId.get(sid) ?? new Map<string, number>();
          scope.byId.set(sid, ids);
          ids.set(row.id, row.seq);
        }
      }
      return scope.byId.get(sessionId)?.get(messageId);
    },
    page: (seqs, scores, plan, scope) =>
      hitsOf(
        seqs.map((seq) => ({ item: scope.bySeq.get(seq)!, score: scores.get(seq)! })),
        plan,
      ),
  };
}

/** The page of ranked rows: the first `plan.limit` the filters pass, with their overlay marks and context. */
function hitsOf(ranked: readonly { item: Scoped; score: number }[], plan: SearchPlan): SearchResult[] {
  const page: { item: Scoped; result: SearchResult }[] = [];
  for (const { item, score } of ranked) {
    if (page.length >= plan.limit) break;
    const { row, sessionId, onPath } = item;
    if (!passesFilters(plan, row.role, row.createdAt)) continue;
    const result = hitResult(
      {
        id: row.id,
        role: row.role,
        content: row.text,
        createdAt: row.createdAt,
        sessionId,
        onActivePath: onPath,
      },
      score,
    );
    page.push({ item, result });
  }
  markPage(page);
  const turns = contextTurns();
  for (const { item, result } of page) {
    const { row, onPath, active } = item;
    if (plan.context > 0) result.context = contextOf(row, onPath ? active : undefined, plan.context, turns);
  }
  return page.map(({ result }) => result);
}

function rowsInScope(sessions: ReadonlyMap<string, SessionData>, plan: SearchPlan): Scoped[] {
  // A set of sessions (an owner's, however many) is walked itself: the other sessions are never looked at.
  const ids =
    plan.sessionId !== undefined
      ? [plan.sessionId]
      : plan.sessionIds !== undefined
        ? [...plan.sessionIds]
        : [...sessions.keys()];
  const scoped: Scoped[] = [];
  for (const sessionId of ids) {
    if (plan.sessionIds !== undefined && !plan.sessionIds.has(sessionId)) continue;
    const data = sessions.get(sessionId);
    if (!data) continue;
    const active = activePath(data);
    for (const row of data.rows.values()) {
      const onPath = active.has(row);
      // A branch outside the search takes no part at all: neither a hit nor a neighbour.
      if (plan.activeOnly && !onPath) continue;
      scoped.push({ row, sessionId, data, onPath, active });
    }
  }
  return scoped;
}

function rankRecall({ rows: scoped, bySeq }: Scope, terms: QueryTerm[], top: number | undefined) {
  const frequencies: { seq: number; tf: number[]; length: number }[] = [];
  const documentFrequency = new Array<number>(terms.length).fill(0);
  let totalLength = 0;
  const count = counterOf(terms);
  for (const item of scoped) {
    // A message's length is its token estimate, as the SQL backends keep it: counted in index tokens, a 100 KB
    // word was one token here and 25,000 there, and the backends ranked such a message at opposite ends.
    const length = item.row.tokens;
    totalLength += length;
    const tf = count(item.row);
    if (tf === undefined) continue;
    tf.forEach((n, i) => {
      if (n > 0) documentFrequency[i]!++;
    });
    frequencies.push({ seq: item.row.seq, tf, length });
  }
  const average = scoped.length === 0 ? 0 : totalLength / scoped.length;
  const perTerm = terms.map(() => new Map<number, number>());
  const weights = documentFrequency.map((df) => idf(scoped.length, df));
  for (const { seq, tf, length } of frequencies) {
    tf.forEach((n, i) => {
      if (n > 0) perTerm[i]!.set(seq, bm25Weight(weights[i]!, n, length, average));
    });
  }
  const parentOf = (seq: number) => textParent(bySeq.get(seq)?.row)?.seq ?? null;
  const lifts = timeTermCount(terms);
  return rankCandidates(perTerm, parentOf, top === undefined ? { lifts } : { top, lifts });
}

/**
 * Each term's count in a row: the words in its words, the query's time terms (date-terms.ts, in front) in its time
 * tokens, kept apart so that a search naming no time compares no more words than before. Undefined: no match.
 */
function counterOf(terms: QueryTerm[]): (row: Row) => number[] | undefined {
  const lifts = timeTermCount(terms);
  const count = termCounter(lifts === 0 ? terms : terms.slice(lifts));
  if (lifts === 0) return (row) => count(rowTerms(row));
  const times = terms.slice(0, lifts).map((term) => (term.kind === "word" ? term.word : ""));
  return (row) => {
    const words = count(rowTerms(row));
    const own = rowTimes(row);
    let tf: number[] | undefined;
    times.forEach((time, i) => {
      if (!own.includes(time)) return;
      tf ??= new Array<number>(terms.length).fill(0);
      tf[i] = 1;
    });
    if (words === undefined) return tf;
    tf ??= new Array<number>(terms.length).fill(0);
    for (let i = 0; i < words.length; i++) tf[lifts + i] = words[i]!;
    return tf;
  };
}

/**
 * The turn before `row` for the ranking: its nearest ancestor with searchable text, through a run of at most
 * TEXTLESS_RUN messages without (tool calls and results are no turns of the conversation).
 */
function textParent(row: Row | undefined): Row | null {
  let parent = row?.parent ?? null;
  for (let run = 0; parent !== null && rowTerms(parent).words.length === 0; run++) {
    if (run === TEXTLESS_RUN) return null;
    parent = parent.parent;
  }
  return parent;
}

/**
 * Up to `turns` turns before and after `row`: its ancestors, and the active path's (else the newest) replies. Hits
 * come in page order, so the shared `take` meets the turns in the order the SQL backends count them.
 */
function contextOf(
  row: Row,
  active: ReadonlySet<Row> | undefined,
  turns: number,
  take: (row: Row) => SearchContextTurn,
) {
  const ancestors: Row[] = [];
  for (let at = row.parent; at && ancestors.length < turns; at = at.parent) ancestors.push(at);
  const before = ancestors.reverse().map(take);
  const after: SearchContextTurn[] = [];
  let at: Row | undefined = row;
  while (after.length < turns) {
    const children: Row[] = at.children;
    const next: Row | undefined = active
      ? children.find((child) => active.has(child))
      : children[children.length - 1];
    if (next === undefined) break;
    after.push(take(next));
    at = next;
  }
  return { before, after };
}

/**
 * A search's context turns: each message made into a turn once and shared by every hit it borders, its text shown
 * while the distinct turns' stored bytes stay within SEARCH_CONTEXT_BYTES (see search/context.ts).
 */
function contextTurns(): (row: Row) => SearchContextTurn {
  const made = new Map<Row, SearchContextTurn>();
  let spent = 0;
  return (row) => {
    let turn = made.get(row);
    if (turn === undefined) {
      spent += row.bytes;
      turn =
        spent <= SEARCH_CONTEXT_BYTES
          ? { id: row.id, role: row.role, content: row.text, createdAt: row.createdAt }
          : contextOverBudget(row.id, row.role, row.createdAt);
      made.set(row, turn);
    }
    return turn;
  };
}
