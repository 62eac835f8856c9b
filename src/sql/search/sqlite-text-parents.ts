/**
 * The turn before a candidate, for ranked recall on SQLite: a message without searchable text (an agent's tool
 * call or result) is no turn of the conversation, so where a candidate's parent has none, the ranking links the
 * candidate to its nearest ancestor with text, through a run of at most TEXTLESS_RUN such messages
 * (search/rank.ts; the memory and Postgres backends do the same).
 *
 * A message has searchable text when the index holds a row for it (indexing.ts indexes only text with a word). A
 * row the index does not cover yet (above its watermark: a read-only connection's last batch) counts as text, so
 * the walk stops there, as it did before messages without text were passed through.
 */
import { TEXTLESS_RUN } from "../../search/rank.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

// ? the parents to look at (JSON), ? the watermark (twice), ? the run's bound. A walk starts at each parent without
// text; each row of `up` is a message on it, with `run` messages without text below it and whether it has text
// itself: a walk goes on only from a message without. A message has an index row exactly when it has text; FTS5's
// own table of document sizes (a row per indexed document) answers that with a primary-key lookup, a third of the
// cost of a lookup through the index.
const TEXT_PARENTS = `WITH RECURSIVE up(start, seq, run, texted) AS (
    SELECT j.value, j.value, 0, 0 FROM json_each(?) j
    WHERE j.value <= ? AND NOT EXISTS (SELECT 1 FROM agent_messages_fts_docsize d WHERE d.id = j.value)
    UNION ALL
    SELECT up.start, m.parent_seq, up.run + 1,
      m.parent_seq > ? OR EXISTS (SELECT 1 FROM agent_messages_fts_docsize d WHERE d.id = m.parent_seq)
    FROM up JOIN agent_messages m INDEXED BY agent_messages_node ON m.seq = up.seq
    WHERE NOT up.texted AND up.run < ? AND m.parent_seq IS NOT NULL
  )
  SELECT group_concat(start || ',' || seq) FROM up WHERE texted`;

/**
 * For each of `parents` (seqs of messages that are no candidates) without searchable text: its nearest ancestor
 * with text, when one lies within the run's bound. A parent missing from the answer keeps its link (a parent with
 * text), or makes none (no candidate is without text).
 */
export function textParents(
  driver: SqlDriver,
  parents: readonly number[],
  watermark: number,
): Map<number, number> {
  const found = new Map<number, number>();
  if (parents.length === 0) return found;
  // One value, "start,parent,…": a row each cost ~0.3 µs more (a question of an agent's session walks hundreds).
  const [pairs] = driver.column<string | null>(TEXT_PARENTS, [
    JSON.stringify(parents),
    watermark,
    watermark,
    TEXTLESS_RUN,
  ]);
  if (!pairs) return found;
  const numbers = pairs.split(",");
  for (let i = 0; i + 1 < numbers.length; i += 2) found.set(Number(numbers[i]), Number(numbers[i + 1]));
  return found;
}
