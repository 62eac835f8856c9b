/**
 * The timed reads of either engine (statements.ts): each one statement, or a statement per few hundred ids, so a read
 * costs the rows it answers.
 */
import type { SessionMessage } from "../../contract/message.js";
import type { StepWrite } from "../../contract/step.js";
import {
  type LocatedMessage,
  locatedOf,
  type TimedRow,
  type TimedScope,
  type TimedStatement,
  type TimedStatements,
} from "./statements.js";

/** A scope of threads read whole by one statement: only sessions of `source`, of an owner (`owner` when given). */
export interface OwnedScope extends TimedScope {
  source: string;
  owner?: string | undefined;
}

/** A page read in one statement: the scope's count, its sessions' owners, and the page's messages, opened. */
export interface ListedPage {
  total: number;
  owners: Map<string, string>;
  rows: { at: LocatedMessage; owner: string; message: SessionMessage }[];
}

/** An engine's one-statement page (undefined where it has none: the caller reads `count`, `page` and the rows). */
export type ListPage = (
  scope: OwnedScope,
  descending: boolean,
  limit: number,
  offset: number,
) => Promise<ListedPage | undefined>;

/**
 * An engine's write of a step of new messages whose own statement checks that no session holds their ids: true
 * when it wrote the step, false when it wrote nothing (an id is held, or the step is not one it writes so).
 */
export type NewSteps = (step: StepWrite) => Promise<boolean>;

// Ids per `locate` statement (under every engine's parameter limit).
const IDS_PER_STATEMENT = 500;

/** A store's messages read by their own time and found by id (docs/MASTRA.md). */
export class TimedMessages {
  constructor(
    private readonly statements: () => TimedStatements,
    private readonly rows: (statement: TimedStatement) => Promise<TimedRow[]>,
    /**
     * The stored messages of a session among ids, in one read (an engine whose reads are round trips has it; absent:
     * a caller reads message by message).
     */
    readonly messagesOf?: (sessionId: string, ids: readonly string[]) => Promise<SessionMessage[]>,
    private readonly listPage?: ListPage,
    private readonly indexed: () => Promise<void> = async () => undefined,
    private readonly newSteps?: NewSteps,
  ) {}

  /**
   * Appends the step's messages after the session's latest message only if no session holds any of their ids,
   * checked by the write itself (on one Postgres server its one statement: the id look-up is no round trip of its
   * own). False when nothing was written: an id is held, or the engine has no such write (SQLite, a cluster) or
   * not for this step; the caller then looks the ids up ({@link locate}) and writes the general way.
   */
  async appendNew(step: StepWrite): Promise<boolean> {
    if (!this.newSteps) return false;
    // The check probes the id index, which the first read makes.
    await this.indexed();
    return this.newSteps(step);
  }

  /** The page, count and owners in one statement where the engine reads them so; else undefined. */
  async list(
    scope: OwnedScope,
    descending: boolean,
    limit: number,
    offset: number,
  ): Promise<ListedPage | undefined> {
    if (!this.listPage) return undefined;
    if (scope.sessionIds.length === 0) return { total: 0, owners: new Map(), rows: [] };
    await this.indexed();
    return this.listPage(scope, descending, limit, offset);
  }

  /** Where each of `ids` is stored (ids not stored are left out; an id stored in two sessions, each). */
  async locate(ids: readonly string[]): Promise<LocatedMessage[]> {
    const found: LocatedMessage[] = [];
    for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
      const rows = await this.rows(this.statements().locate(ids.slice(i, i + IDS_PER_STATEMENT)));
      for (const row of rows) found.push(locatedOf(row));
    }
    return found;
  }

  /** A page of the scope's messages in time order (ties: the order they were stored). */
  async page(
    scope: TimedScope,
    descending: boolean,
    limit: number,
    offset: number,
  ): Promise<LocatedMessage[]> {
    if (scope.sessionIds.length === 0 || limit <= 0) return [];
    return (await this.rows(this.statements().page(scope, descending, limit, offset))).map(locatedOf);
  }

  /** How many messages the scope holds. */
  async count(scope: TimedScope): Promise<number> {
    if (scope.sessionIds.length === 0) return 0;
    const [row] = (await this.rows(this.statements().count(scope))) as unknown as { n: unknown }[];
    return Number(row?.n ?? 0);
  }

  /** `target`, up to `before` messages of its session before it and `after` after it, oldest first. */
  async window(target: LocatedMessage, before: number, after: number): Promise<LocatedMessage[]> {
    const older = (await this.rows(this.statements().beside(target, false, before + 1)))
      .map(locatedOf)
      .reverse();
    if (after <= 0) return older;
    const newer = (await this.rows(this.statements().beside(target, true, after))).map(locatedOf);
    return [...older, ...newer];
  }
}

/**
 * `rows`, but its first call creates the reads' two indexes (`index`) first: only a store the Mastra door reads pays
 * for them, on each append after (two more index entries a message), and a store never read by time pays nothing. A
 * failed creation is thrown and tried again by the next read.
 */
export function indexedFirst(
  index: () => Promise<void>,
  rows: (statement: TimedStatement) => Promise<TimedRow[]>,
): (statement: TimedStatement) => Promise<TimedRow[]> {
  const indexed = once(index);
  return async (statement) => {
    await indexed();
    return rows(statement);
  };
}

/** `index`, run by the first call only (a failed run is thrown, and run again by the next call). */
export function once(index: () => Promise<void>): () => Promise<void> {
  let indexed: Promise<void> | undefined;
  return () => {
    indexed ??= index().catch((error: unknown) => {
      indexed = undefined;
      throw error;
    });
    return indexed;
  };
}
