/**
 * The timed reads of either engine (statements.ts): each one statement, or a statement per few hundred ids, so a read
 * costs the rows it answers.
 */
import type { SessionMessage } from "../../contract/message.js";
import {
  type LocatedMessage,
  locatedOf,
  type TimedRow,
  type TimedScope,
  type TimedStatement,
  type TimedStatements,
} from "./statements.js";

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
  ) {}

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
  let indexed: Promise<void> | undefined;
  return async (statement) => {
    indexed ??= index().catch((error: unknown) => {
      indexed = undefined;
      throw error;
    });
    await indexed;
    return rows(statement);
  };
}
