/**
 * The rows of a path that call given tools (`SessionProvider.getToolMessages`): one walk of the path's tree
 * columns tests each row's stored JSON for the tool names without parsing it, and only the rows that pass are read
 * and parsed, in bounded groups.
 */

import type { SessionMessage } from "../contract/message.js";
import { parseMessage } from "../message/json.js";
import { carriesTool, nameNeedles } from "../message/tool-parts.js";
import { contentSql, resolveContent } from "./chunks.js";
import type { SqlDriver } from "./connection/driver.js";
import { hydrate } from "./media/attachments.js";

/** Rows read (and restored) per statement. */
const READ_GROUP = 100;

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

/** The messages on the path to the row `leafSeq` with a part calling one of `names`, root first, restored. */
export function toolMessages(
  driver: SqlDriver,
  sessionId: string,
  leafSeq: number,
  names: readonly string[],
): SessionMessage[] {
  const needles = nameNeedles(names).map(containing);
  const seqs = driver.column<number>(candidatesSql(needles.length), [...needles, leafSeq, ...needles]);
  const out: SessionMessage[] = [];
  for (let start = 0; start < seqs.length; start += READ_GROUP) {
    const group = seqs.slice(start, start + READ_GROUP);
    const contents = new Map<number, unknown>();
    for (const row of driver.all<{ seq: number; content: unknown }>(CONTENT_BY_SEQ, [
      JSON.stringify(group),
    ])) {
      contents.set(Number(row.seq), row.content);
    }
    const found: SessionMessage[] = [];
    for (const seq of group) {
      const message = contents.has(seq)
        ? parseMessage(resolveContent(driver, contents.get(seq), sessionId))
        : null;
      if (message && carriesTool(message, names)) found.push(message);
    }
    out.push(...hydrate(driver, found));
  }
  return out;
}
