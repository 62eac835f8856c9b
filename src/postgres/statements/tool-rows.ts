/**
 * Postgres's statements of a path's tool rows (sql/tool-rows/steps.ts has the steps): the walk finds the leaf (the
 * latest when none is named) in the same statement and tests each row with LIKE ANY; sealed content (an encrypted
 * owner's, stored-form.ts) cannot be tested there, so it always passes and is opened after its read. Both
 * statements are prepared; in the Citus layout each names the session, so it runs on the session's shard alone.
 */
import { SEALED_PREFIX } from "../../message/json.js";
import { toolNeedles } from "../../message/tool-parts.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import { statement, type Tables } from "../../sql/engines/postgres/tables.js";
import { perform, prepared } from "../../sql/program.js";
import type { ToolRowStatements } from "../../sql/tool-rows/steps.js";
import { leafCte } from "../history.js";
import { hydrate } from "../media/attachments.js";
import { openContents } from "../stored-form.js";
import { stepTo } from "../tree.js";

// The seqs of the path to `$2` (NULL: the latest leaf) of session `$1` whose JSON holds one of the LIKE patterns
// `$3`, root first.
const SEALED = `'${SEALED_PREFIX}%'`;
const candidatesSql = statement(
  (t) => `WITH RECURSIVE ${leafCte(t)},
  path(seq, parent_seq, depth, hit) AS (
    SELECT seq, parent_seq, depth, content LIKE ANY ($3::text[]) OR content LIKE ${SEALED} FROM leaf
    UNION ALL
    SELECT m.seq, m.parent_seq, m.depth, m.content LIKE ANY ($3::text[]) OR m.content LIKE ${SEALED} FROM path p
      ${stepTo(t.messages, "m", "p.parent_seq", t.layout.scope("$1::text"))}
  ) SELECT seq FROM path WHERE hit ORDER BY depth`,
);

// `$2` the session in the Citus layout.
const contentSql = statement(
  (t) =>
    `SELECT seq, content FROM ${t.messages} WHERE seq = ANY ($1::bigint[])${t.layout.onSession(null, "$2::text")}`,
);

/** A LIKE pattern matching any text that holds `needle` (`\` is LIKE's default escape). */
const containing = (needle: string) => `%${needle.replace(/[\\%_]/g, "\\$&")}%`;

/** The statement table of the tool rows on the path to `leafId` (the latest leaf when null) of `sessionId`. */
export function postgresToolRows(
  executor: Executor,
  t: Tables,
  sessionId: string,
  leafId: string | null,
): ToolRowStatements {
  return {
    candidates: (names) =>
      prepared(candidatesSql(t), [sessionId, leafId, toolNeedles(names).map(containing)]),
    contents: (seqs) => prepared(contentSql(t), [seqs.map(String), ...t.layout.routeParams(sessionId)]),
    *open(stored) {
      const contents = stored.map((content) => (content === undefined ? null : (content as string | null)));
      return yield* perform(() => openContents(executor.query, t, sessionId, contents));
    },
    *hydrate(messages) {
      return yield* perform(() => hydrate(executor, t, messages));
    },
  };
}
