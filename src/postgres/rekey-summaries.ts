/**
 * The overlay summaries of a key rotation on Postgres (rekey.ts; SQLite's twin is sqlite/rekey-summaries.ts): an
 * owner has few of them (one per compaction), so they are re-sealed under the new key in the rotation's final
 * transaction, before it checks that no message of the owner names another key.
 */
import { sealContent, sealedStart } from "../store/crypto/seal.js";
import { onSession, sessionParam } from "./citus/route.js";
import type { Query } from "./connection/client.js";
import type { Rotation } from "./rotation.js";

interface SummaryRow {
  seq: string;
  id: string;
  session_id: string;
  summary: string;
}

/**
 * Re-seals the owner's summaries sealed under another key than the rotation's (inside the caller's transaction);
 * answers how many it wrote. An unflagged summary that starts like sealed content is sealed (summaries.ts). A
 * summary written meanwhile (its stored text changed) is left as its writer sealed it.
 */
export async function resealSummaries(query: Query, at: Rotation): Promise<number> {
  const { t, key } = at;
  const start = sealedStart(at.id);
  const rows = await query<SummaryRow>(
    `SELECT c.seq::text AS seq, c.id, h.session_id, c.summary
     FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
     JOIN ${t.compactions} c ON c.session_num = h.num${onSession(t, "c", "h.session_id")}
     WHERE s.owner = $1 AND NOT c.summary_json AND c.summary LIKE '~sealed%' AND left(c.summary, $2) <> $3`,
    [at.owner, start.length, start],
  );
  if (rows.length === 0) return 0;
  const opened = await t.keys!.run(query, (k) =>
    rows.map((r) => k.open(r.session_id, r.summary, r.id, "overlay")),
  );
  let written = 0;
  for (const [i, row] of rows.entries()) {
    const sealed = sealContent(key, row.session_id, row.id, opened[i]!, "overlay");
    // One routed statement per summary (on Citus the session names the shard): they are few.
    const done = await query(
      `UPDATE ${t.compactions} SET summary = $1 WHERE seq = $2::bigint AND summary = $3${onSession(t, null, "$4::text")}
       RETURNING seq`,
      [sealed, row.seq, row.summary, ...sessionParam(t, row.session_id)],
    );
    written += done.length;
  }
  return written;
}
