/**
 * The rows of a path that call given tools (`SessionProvider.getToolMessages`): one walk of the path tests each
 * row's stored JSON for the tool names without parsing it, and only the rows that pass are read and parsed, in
 * bounded groups.
 */

import type { SessionMessage } from "../contract/message.js";
import { parseMessage, SEALED_PREFIX } from "../message/json.js";
import { carriesTool, toolNeedles } from "../message/tool-parts.js";
import { onSession, sessionParam, sessionScope } from "./citus/route.js";
import type { Executor } from "./connection/client.js";
import { statement, type Tables } from "./connection/tables.js";
import { leafCte } from "./history.js";
import { hydrate } from "./media/attachments.js";
import { openContents } from "./stored-form.js";
import { stepTo } from "./tree.js";

/** Rows read (and restored) per statement. */
const READ_GROUP = 100;

// The seqs of the path to `$2` (NULL: the latest leaf) of session `$1` whose JSON holds one of the LIKE patterns
// `$3`, root first. Sealed content (an encrypted owner's, stored-form.ts) cannot be tested: it always passes.
const SEALED = `'${SEALED_PREFIX}%'`;
const candidatesSql = statement(
  (t) => `WITH RECURSIVE ${leafCte(t)},
  path(seq, parent_seq, depth, hit) AS (
    SELECT seq, parent_seq, depth, content LIKE ANY ($3::text[]) OR content LIKE ${SEALED} FROM leaf
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, m.content LIKE ANY ($3::text[]) OR m.content LIKE ${SEALED} FROM path p
      ${stepTo(t.messages, "m", "p.parent_seq", sessionScope(t, "$1::text"))}
  ) SELECT seq FROM path WHERE hit ORDER BY depth`,
);

// `$2` the session in the Citus layout.
const contentSql = statement(
  (t) =>
    `SELECT seq, content FROM ${t.messages} WHERE seq = ANY ($1::bigint[])${onSession(t, null, "$2::text")}`,
);

/** A LIKE pattern matching any text that holds `needle` (`\` is LIKE's default escape). */
const containing = (needle: string) => `%${needle.replace(/[\\%_]/g, "\\$&")}%`;

/** The messages on the path to `leafId` (the latest leaf when null) with a part calling one of `names`, restored. */
export async function toolMessages(
  executor: Executor,
  t: Tables,
  sessionId: string,
  leafId: string | null,
  names: readonly string[],
): Promise<SessionMessage[]> {
  const patterns = toolNeedles(names).map(containing);
  const rows = await executor.query<{ seq: string | number }>(
    candidatesSql(t),
    [sessionId, leafId, patterns],
    true,
  );
  const seqs = rows.map((row) => String(row.seq));
  const out: SessionMessage[] = [];
  for (let start = 0; start < seqs.length; start += READ_GROUP) {
    const group = seqs.slice(start, start + READ_GROUP);
    const contents = new Map<string, string>();
    for (const row of await executor.query<{ seq: string | number; content: string }>(
      contentSql(t),
      [group, ...sessionParam(t, sessionId)],
      true,
    )) {
      contents.set(String(row.seq), row.content);
    }
    const found: SessionMessage[] = [];
    const opened = await openContents(
      executor.query,
      t,
      sessionId,
      group.map((seq) => contents.get(seq) ?? null),
    );
    for (const content of opened) {
      const message = content === null ? null : parseMessage(content);
      if (message && carriesTool(message, names)) found.push(message);
    }
    out.push(...(await hydrate(executor, t, found)));
  }
  return out;
}
