/**
 * SQLite's statements of a path's tool rows (steps.ts has the steps): the walk follows the tree
 * columns from the leaf's seq and tests each row with GLOB; a row is opened by the driver's own helpers (its
 * continuation rows and sealed content, sql/engines/sqlite/chunks.ts), synchronously.
 */
import type { SessionMessage } from "../../contract/message.js";
import { nameNeedles } from "../../message/tool-parts.js";
import { contentSql, resolveContent } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { perform, query } from "../program.js";
import type { ToolRowStatements } from "./steps.js";

// The seqs of the path from `?` to the root whose JSON may name a tool, root first: it holds a name or a backslash
// before `u` or `/` (NAME_ESCAPES). GLOB, not instr: with a pattern that starts with `*` it skips to the next
// possible match, and took a third of instr's time per name on a 20,000-row path. A row split across continuation
// rows keeps no JSON in `content`, so it always passes. A depth guard stops a damaged cycle, as in PATH_SEQS.
function candidatesSql(names: number): string {
  const test = (alias: string) =>
    [
      `${alias}chunks > 0`,
      ...Array.from({ length: names }, () => `${alias}content GLOB ?`),
      `${alias}content GLOB '*\\[u/]*'`,
    ].join(" OR ");
  return `WITH RECURSIVE path(seq, parent_seq, depth, hit) AS (
    SELECT seq, parent_seq, depth, ${test("")} FROM agent_messages WHERE seq = ?
    UNION ALL SELECT m.seq, m.parent_seq, m.depth, ${test("m.")} FROM path p JOIN agent_messages m ON m.seq = p.parent_seq
      WHERE m.depth < p.depth
  ) SELECT seq FROM path WHERE hit ORDER BY depth`;
}

/** A GLOB pattern matching any text that holds `needle` (`*`, `?` and `[` stand for themselves in brackets). */
const containing = (needle: string) => `*${needle.replace(/[*?[]/g, "[$&]")}*`;

const CONTENT_BY_SEQ = `SELECT m.seq, ${contentSql("m")} AS content FROM json_each(?) j
  JOIN agent_messages m ON m.seq = j.value`;

/**
 * The statement table of the tool rows on the path to the row `leafSeq` of session `sessionId`; `hydrate` restores
 * offloaded media (sql/media/sqlite.ts, handed in by the session provider).
 */
export function sqliteToolRows(
  driver: SqlDriver,
  sessionId: string,
  leafSeq: number,
  hydrate: (messages: SessionMessage[]) => SessionMessage[],
): ToolRowStatements {
  return {
    candidates(names) {
      const needles = nameNeedles(names).map(containing);
      return query(candidatesSql(needles.length), [...needles, leafSeq, ...needles]);
    },
    contents: (seqs) => query(CONTENT_BY_SEQ, [JSON.stringify(seqs)]),
    *open(stored) {
      return yield* perform(() =>
        stored.map((content) => (content === undefined ? null : resolveContent(driver, content, sessionId))),
      );
    },
    *hydrate(messages: SessionMessage[]) {
      return yield* perform(() => hydrate(messages));
    },
  };
}
