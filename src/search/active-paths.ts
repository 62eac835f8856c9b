/**
 * An active-branch search whose window held too few hits on the active paths (newer matches lie on branches the
 * conversation left) reads again with the sessions that crowded it kept to their paths inside the read. Each such
 * read walks those paths whole, so which sessions it keeps to is bounded here, the same on every backend. The strict
 * search's window on an engine that checks hits a window at a time, and how it grows, is here too (growingWindow).
 */

/**
 * How often a search reads again: each read can bring sessions whose matches lay behind the last window, which may
 * crowd out the next one in turn.
 */
export const ACTIVE_PATH_ROUNDS = 3;

/**
 * Most path rows one read walks: a store-wide search crowded by thousands of sessions that each left a branch would
 * otherwise walk all their paths. The first session is always kept to, whatever its depth: a one-session search
 * walks its path as getHistory does.
 */
export const ACTIVE_PATH_ROWS = 100_000;

/** A session with other branches: its number and the depth of its leaf (its path has depth + 1 rows). */
export interface BranchedSession {
  num: number;
  depth: number;
}

/** The sessions a search keeps to their active paths, grown read by read within ACTIVE_PATH_ROWS. */
export class ActivePaths {
  private readonly sessions = new Set<number>();
  private rows = 0;
  private rounds = 0;

  /** The sessions kept to so far (their numbers). */
  get kept(): number[] {
    return [...this.sessions];
  }

  /**
   * Keeps to those of `crowding` not kept to yet, shallowest first, while their paths fit; false when none was
   * added or the rounds are spent (the search then keeps its answer).
   */
  add(crowding: Iterable<BranchedSession>): boolean {
    if (this.rounds >= ACTIVE_PATH_ROUNDS) return false;
    const fresh = [...crowding]
      .filter(({ num }) => !this.sessions.has(num))
      .sort((a, b) => a.depth - b.depth);
    let added = false;
    for (const { num, depth } of fresh) {
      if (this.sessions.has(num)) continue;
      if (this.sessions.size > 0 && this.rows + depth + 1 > ACTIVE_PATH_ROWS) break;
      this.sessions.add(num);
      this.rows += depth + 1;
      added = true;
    }
    if (added) this.rounds++;
    return added;
  }
}

/** How a search tells whether to read again: its answer held too few hits, and which sessions crowded it. */
export interface ActivePathRound<T> {
  /** Whether an answer came back with too few hits. */
  short(answer: T): boolean;
  /** The sessions with other branches that took part in an answer. */
  crowding(answer: T): Iterable<BranchedSession>;
}

/**
 * The rounds of a search that reads again with sessions kept to their active paths, written once for engines that
 * answer at once and those that answer later: while an answer is short and ActivePaths adds a session that crowded
 * it, it yields the sessions to keep to (those of earlier rounds too) and takes the answer read again; it returns
 * `first` or the last answer read.
 */
export function* activePathRounds<T>(
  first: T,
  round: ActivePathRound<T>,
  paths = new ActivePaths(),
): Generator<readonly number[], T, T> {
  let answer = first;
  while (round.short(answer) && paths.add(round.crowding(answer))) answer = yield paths.kept;
  return answer;
}

/** activePathRounds on an engine that answers at once: `reread` reads the answer again with those sessions kept to. */
export function keepToActivePaths<T>(
  first: T,
  reads: ActivePathRound<T> & { reread(sessions: readonly number[]): T },
): T {
  const rounds = activePathRounds(first, reads);
  let round = rounds.next();
  while (!round.done) round = rounds.next(reads.reread(round.value));
  return round.value;
}

/** What a read of a window of best-ranked matches answers (growingWindow, keepWindowToActivePaths). */
export interface WindowRead {
  /** How many hits the window holds that the page returns (those on the active paths where only they count). */
  found: number;
  /** How many ranked matches the window held: fewer than its size when it reached past the last one. */
  held: number;
  /** Whether the newest matches filled the candidates: only then can older hits on the active paths be left out. */
  full: boolean;
}

/**
 * The strict search's (`match: "all"`) window on an engine that ranks every candidate but checks hits a window at a
 * time (Postgres, on one server and across a cluster's shards): `plan.limit` of the `cap` best-ranked matches where
 * every hit counts; for an active-branch search 4 × limit (at least 40), grown ×4 while a window holds too few hits on
 * the active paths and more matches lie past it, so off-path matches never crowd out results. Returns the last read.
 */
export async function growingWindow<A extends WindowRead>(
  { limit, activeOnly }: { limit: number; activeOnly: boolean },
  cap: number,
  read: (window: number) => Promise<A>,
): Promise<A> {
  let window = activeOnly ? Math.min(cap, Math.max(limit * 4, 40)) : limit;
  for (;;) {
    const answer = await read(window);
    if (answer.found >= limit || answer.held < window || window >= cap) return answer;
    window = Math.min(cap, window * 4);
  }
}

/**
 * The rounds of activePathRounds for the strict search's window reads, on an engine that answers later: while an
 * active-branch search's full window held too few hits, `reread` reads it again with the sessions that crowded it
 * (`crowding`) kept to their paths. `paths` carries the sessions kept to, and the rounds spent, from earlier windows.
 */
export async function keepWindowToActivePaths<A extends WindowRead>(
  { limit, activeOnly }: { limit: number; activeOnly: boolean },
  first: A,
  reads: { crowding(answer: A): Iterable<BranchedSession>; reread(sessions: readonly number[]): Promise<A> },
  paths?: ActivePaths,
): Promise<A> {
  const short = (answer: A) => activeOnly && answer.found < limit && answer.full;
  const rounds = activePathRounds(first, { short, crowding: reads.crowding }, paths);
  let round = rounds.next();
  while (!round.done) round = rounds.next(await reads.reread(round.value));
  return round.value;
}

/**
 * Of `branched`, the sessions one read keeps to their active paths: shallowest first while their paths fit
 * ACTIVE_PATH_ROWS (the first always). The vector channel's read of a set of sessions keeps to these.
 */
export function pathsWithin(branched: Iterable<BranchedSession>): number[] {
  const paths = new ActivePaths();
  paths.add(branched);
  return paths.kept;
}

/**
 * The vector channel's nearest messages on the active paths of the whole store (no sessions named: which of its
 * sessions have other branches is not walked up front). `read(paths)` answers with those sessions kept to their
 * paths inside the read; while a full answer holds messages off their session's active path (`crowding`: their
 * sessions), it reads again with those sessions kept to theirs too, within ActivePaths' bounds. A branched session
 * whose answered messages all lie on its path is not read again: keeping it to its path would leave out only
 * messages the answer does not hold. A session past the bounds may answer messages off its path, which a search's
 * page leaves out.
 */
export async function nearestOnActivePaths(
  limit: number,
  read: (paths: readonly number[]) => Promise<number[]>,
  crowding: (seqs: readonly number[]) => Promise<Iterable<BranchedSession>>,
): Promise<number[]> {
  let answer = await read([]);
  const paths = new ActivePaths();
  // An answer short of `limit` held every passing vector the read reaches: one that lets fewer pass adds none.
  while (answer.length >= limit && answer.length > 0 && paths.add(await crowding(answer))) {
    answer = await read(paths.kept);
  }
  return answer;
}
