/**
 * The notices (INFO, NOTICE, WARNING) a statement raises on one connection, for a caller that must read what the
 * server says rather than what it returns: a `VACUUM (VERBOSE)` tells in INFO notices how many dead rows it had to
 * keep (sql/purge/postgres-dead-rows.ts). A pg Client emits them as `notice` events, PGlite hands them to a query's
 * `onNotice`; the reference's `execute()` connection has no way to deliver them.
 */
import type { PostgresQueryable } from "./reference-connection.js";

/** Runs one statement on a pinned connection and resolves the notices it raised, each its message and detail. */
export type NoticesOf = (sql: string) => Promise<string[]>;

/** What both drivers' notices carry (pg's NoticeMessage, PGlite's NoticeMessage). */
interface Notice {
  message?: string;
  detail?: string;
}

interface NoticeEmitter {
  on(event: "notice", listener: (notice: Notice) => void): unknown;
  off(event: "notice", listener: (notice: Notice) => void): unknown;
}

interface NoticeQueryable {
  query(
    text: string,
    params?: unknown[],
    options?: { onNotice?: (notice: Notice) => void },
  ): Promise<{ rows: unknown[] }>;
}

const textOf = (notice: Notice) => [notice.message, notice.detail].filter((s) => s !== undefined).join("\n");

/**
 * The notices of a pg Client's (or PoolClient's) statements, or undefined for a connection that emits none. The
 * listener is attached for that one statement only: a pooled connection is handed out again with none left on it.
 * `run` is the store's runner over a connection (its errors wrapped as every statement's are).
 */
export function emittedNotices(
  connection: PostgresQueryable,
  run: (connection: PostgresQueryable) => (sql: string) => Promise<unknown>,
): NoticesOf | undefined {
  const emitter = connection as Partial<NoticeEmitter>;
  if (typeof emitter.on !== "function" || typeof emitter.off !== "function") return undefined;
  const query = run(connection);
  return async (sql) => {
    const notices: string[] = [];
    const listener = (notice: Notice) => notices.push(textOf(notice));
    emitter.on?.("notice", listener);
    try {
      await query(sql);
    } finally {
      emitter.off?.("notice", listener);
    }
    return notices;
  };
}

/** The notices of a PGlite statement, passed to that query's own `onNotice` (nothing stays registered). */
export function pgliteNotices(
  db: PostgresQueryable,
  run: (connection: PostgresQueryable) => (sql: string) => Promise<unknown>,
): NoticesOf {
  const lite = db as unknown as NoticeQueryable;
  return async (sql) => {
    const notices: string[] = [];
    const onNotice = (notice: Notice) => notices.push(textOf(notice));
    await run({ query: (text, params) => lite.query(text, params, { onNotice }) })(sql);
    return notices;
  };
}
