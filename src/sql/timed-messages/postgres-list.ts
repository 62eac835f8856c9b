/**
 * A page of threads' messages by their own time as ONE statement on one Postgres server (`agent-session/mastra`'s
 * `listMessages`, docs/MASTRA.md "Costs"): the threads' registry rows (a thread of another door, of no owner or not
 * the resource asked for is left out, so a read needs no registry read before it), the count (a thread's message
 * count from its head when no time range is asked, else counted), and each thread's newest (or oldest) rows from the
 * `(session_num, created_at, seq)` index with their content, so a page of 40 reads 40 message rows however long the
 * thread. A cluster answers undefined: its caller reads as before (reads.ts `page`, `count`).
 */
import type { SessionMessage } from "../../contract/message.js";
import { parseMessage } from "../../message/json.js";
import type { Executor } from "../engines/postgres/client.js";
import { hydrate } from "../media/postgres.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { openContents } from "../sealing/postgres-stored-form.js";
import type { ListedPage, OwnedScope } from "./reads.js";
import { locatedOf, type TimedRow } from "./statements.js";

interface ListRow extends TimedRow {
  total: unknown;
  threads: [string, string][] | null;
  owner: string | null;
  content: string | null;
}

// $1 thread ids, $2 source, $3 owner (null: any), $4 rows per thread, $5 limit, $6 offset, then the time bounds.
function listSql(t: KeyedTables, scope: OwnedScope, descending: boolean): string {
  const dir = descending ? "DESC" : "ASC";
  let bounds = "";
  let n = 6;
  for (const [bound, below] of [
    [scope.start, false],
    [scope.end, true],
  ] as const) {
    if (bound === undefined) continue;
    const op = below ? (bound.exclusive ? "<" : "<=") : bound.exclusive ? ">" : ">=";
    bounds += ` AND m.created_at ${op} $${++n}::timestamptz`;
  }
  const total = bounds
    ? `SELECT count(*) AS n FROM sc JOIN ${t.messages} m ON m.session_num = sc.num WHERE true${bounds}`
    : "SELECT COALESCE(sum(sc.message_count), 0) AS n FROM sc";
  return `WITH sc AS (
    SELECT h.num, h.session_id, s.owner, h.message_count FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
    WHERE s.id = ANY($1::text[]) AND s.source = $2::text AND s.owner IS NOT NULL
      AND ($3::text IS NULL OR s.owner = $3::text)
  ),
  tot AS (${total}),
  pg AS (
    SELECT sc.session_id, sc.owner, x.id, x.created_at, x.seq, x.content FROM sc CROSS JOIN LATERAL (
      SELECT m.id, m.created_at, m.seq, m.content FROM ${t.messages} m WHERE m.session_num = sc.num${bounds}
      ORDER BY m.created_at ${dir}, m.seq ${dir} LIMIT $4::bigint
    ) x ORDER BY x.created_at ${dir}, x.seq ${dir} LIMIT $5::bigint OFFSET $6::bigint
  )
  SELECT tot.n AS total, (SELECT json_agg(json_build_array(sc.session_id, sc.owner)) FROM sc) AS threads,
    pg.session_id, pg.owner, pg.id, pg.created_at, pg.seq, pg.content
  FROM tot LEFT JOIN pg ON true ORDER BY pg.created_at ${dir}, pg.seq ${dir}`;
}

/** The page in one statement (see the module comment), or undefined on a cluster. */
export async function postgresList(
  executor: Executor,
  t: KeyedTables,
  scope: OwnedScope,
  descending: boolean,
  limit: number,
  offset: number,
): Promise<ListedPage | undefined> {
  if (t.layout.name !== "single-node") return undefined;
  const params: unknown[] = [
    scope.sessionIds,
    scope.source,
    scope.owner ?? null,
    offset + limit,
    limit,
    offset,
  ];
  for (const bound of [scope.start, scope.end]) if (bound !== undefined) params.push(bound.at);
  // Prepared: the plan (each thread's index range, newest first) does not depend on the values.
  const rows = await executor.query<ListRow>(listSql(t, scope, descending), params, true);
  const first = rows[0];
  const owners = new Map<string, string>(first?.threads ?? []);
  const listed = rows.filter((row) => row.id !== null && row.content !== null);
  // Sealed contents opened a thread at a time (each under its owner's key), then payloads restored at once.
  const bySession = new Map<string, ListRow[]>();
  for (const row of listed) {
    const sessionId = String(row.session_id);
    const group = bySession.get(sessionId);
    if (group) group.push(row);
    else bySession.set(sessionId, [row]);
  }
  const messages = new Map<ListRow, SessionMessage | null>();
  for (const [sessionId, group] of bySession) {
    const contents = await openContents(
      executor.query,
      t,
      sessionId,
      group.map((row) => row.content as string),
      group.map((row) => String(row.id)),
    );
    group.forEach((row, i) => {
      messages.set(row, parseMessage(contents[i] as string));
    });
  }
  const opened = await hydrate(executor, t, [...messages.values()]);
  const byRow = new Map([...messages.keys()].map((row, i) => [row, opened[i]]));
  return {
    total: Number(first?.total ?? 0),
    owners,
    rows: listed.flatMap((row) => {
      const message = byRow.get(row);
      return message ? [{ at: locatedOf(row), owner: String(row.owner), message }] : [];
    }),
  };
}
