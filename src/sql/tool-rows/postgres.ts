/**
 * Postgres's statements of a path's tool rows (steps.ts has the steps): the walk finds the leaf (the
 * latest when none is named) in the same statement and tests each row with LIKE ANY; sealed content (an encrypted
 * owner's, sql/sealing/postgres-stored-form.ts) cannot be tested there, so it always passes and is opened after its read. Both
 * statements are prepared; in the Citus layout each names the session, so it runs on the session's shard alone.
 */

import type { SessionMessage } from "../../contract/message.js";
import { SEALED_PREFIX } from "../../message/json.js";
import { toolNeedles } from "../../message/tool-parts.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { leafCte, stepTo } from "../engines/postgres/tree.js";
import { perform, prepared } from "../program.js";
import type { ToolRowStatements } from "./steps.js";

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

/** The engine's helpers the table runs in the program's place, each awaited (the session provider hands them in). */
export interface PostgresToolRowHelpers {
  /** Stored contents opened (sealed ones with their owner's key: stored-form.ts `openContents`). */
  open(contents: (string | null)[]): Promise<(string | null)[]>;
  /** The messages with their offloaded media restored (sql/media/postgres.ts `hydrate`). */
  hydrate(messages: SessionMessage[]): Promise<SessionMessage[]>;
}

/** The statement table of the tool rows on the path to `leafId` (the latest leaf when null) of `sessionId`. */
export function postgresToolRows(
  t: Tables,
  sessionId: string,
  leafId: string | null,
  helpers: PostgresToolRowHelpers,
): ToolRowStatements {
  return {
    candidates: (names) =>
      prepared(candidatesSql(t), [sessionId, leafId, toolNeedles(names).map(containing)]),
    contents: (seqs) => prepared(contentSql(t), [seqs.map(String), ...t.layout.routeParams(sessionId)]),
    *open(stored) {
      const contents = stored.map((content) => (content === undefined ? null : (content as string | null)));
      return yield* perform(() => helpers.open(contents));
    },
    *hydrate(messages) {
      return yield* perform(() => helpers.hydrate(messages));
    },
  };
}
