/**
 * Postgres' own plan for an import's items (the steps around them are the SQL stores' one program, sql/transfer/import.ts, over sql/transfer/postgres-import.ts), with the semantics of SQLite's item-by-item writer: explicit
 * ids, parents and times; rows whose ids are stored are skipped. A batch's messages go in one `unnest` INSERT
 * whose tree columns are computed here from the stored parents' spines, so a batch costs a few round trips however
 * long it is, where SQLite reads each parent's row as it writes the child.
 */

import type { ImportCounts, TransferMessage } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import type { Query } from "../../sql/engines/postgres/client.js";
import { ownerTsvectorSql } from "../../sql/engines/postgres/fts.js";
import { statement, type Tables } from "../../sql/engines/postgres/tables.js";
import { needsEncoding } from "../../sql/engines/postgres/text.js";
import { timestampParam } from "../../sql/engines/postgres/timestamp.js";
import { spineCte } from "../../sql/engines/postgres/tree.js";
import { planImportLinks } from "../../sql/media/postgres.js";
import { formsOf, searchVector } from "../../sql/sealing/postgres-stored-form.js";
import type { ImportCounted } from "../../sql/transfer/import.js";
import type { PostgresImportHelpers } from "../../sql/transfer/postgres-import.js";
import type { AttachmentImport } from "../../store/transfer/attachments.js";
import type { TransferBatch } from "../../store/transfer/base.js";
import { assertTransferMessage, messageFacts } from "../../store/transfer/stream.js";
import { lockSql } from "../append-attempt.js";
import { newestLeafSql, refreshHeadSql } from "../writes.js";
import { writeCompactions } from "./rows.js";

// Rows per INSERT are capped by their text (a batch holds at most 500 items, store/transfer/base.ts), so a
// statement's parameters stay a few MiB however big the messages are.
const STATEMENT_CHARS = 4 << 20;

// In the Citus layout every statement here also names its session (the last parameter), so it runs on the one
// node that holds it (see sql/engines/postgres/layout.ts).
const storedSql = statement(
  (t) =>
    `SELECT id FROM ${t.messages} WHERE session_num = $1::bigint AND id = ANY($2::text[])${t.layout.onSession(null, "$3::text")}`,
);
// Stored parents (`$2`) with their spines (skip-pointer chains, see sql/engines/postgres/tree.ts): what a child's tree columns are
// computed from. Only parents outside the batch are read, so a batch of a chain reads one.
const parentsSql = statement(
  (t) => `WITH RECURSIVE nodes AS (
    SELECT seq, id, depth, jump_seq, cum_bytes, cum_tokens FROM ${t.messages}
    WHERE session_num = $1::bigint AND id = ANY($2::text[])${t.layout.onSession(null, "$3::text")}
  ),
  ${spineCte(t.messages, "sp", "SELECT seq, jump_seq FROM nodes", t.layout.scope("$3::text"))},
  spines AS (SELECT k, array_agg(seq ORDER BY n) AS sseq, array_agg(depth ORDER BY n) AS sdep FROM sp GROUP BY k)
  SELECT nodes.seq, nodes.id, nodes.depth, nodes.cum_bytes, nodes.cum_tokens, COALESCE(spines.sseq, '{}') AS sseq,
    COALESCE(spines.sdep, '{}') AS sdep
  FROM nodes LEFT JOIN spines ON spines.k = nodes.seq`,
);
const allocSql = statement(
  (t) => `SELECT nextval('${t.messagesSeq}') AS seq FROM generate_series(1, $1::integer)`,
);
const insertMessagesSql = statement((t) => {
  const own = t.layout.sessionColumn("$17::text");
  return `INSERT INTO ${t.messages} (seq, session_num, id, parent_seq, role, content, created_at, depth,
      jump_seq, jump_depth, bytes, cum_bytes, tokens, cum_tokens, search, content_hash${own.column})
    SELECT u.seq, $1::bigint, u.id, u.parent_seq, u.role, u.content, u.created_at, u.depth, u.jump_seq, u.jump_depth,
      u.bytes, u.cum_bytes, u.tokens, u.cum_tokens, u.search::tsvector || (SELECT ${ownerTsvectorSql("o.owner")}
        FROM ${t.heads} h LEFT JOIN ${t.sessions} o ON o.id = h.session_id
        WHERE h.num = $1::bigint${t.layout.onSession("h", "$17::text")}), u.content_hash${own.value}
    FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::timestamptz[], $8::integer[],
      $9::bigint[], $10::integer[], $11::integer[], $12::bigint[], $13::integer[], $14::bigint[], $15::text[],
      $16::text[])
      AS u(seq, id, parent_seq, role, content, created_at, depth, jump_seq, jump_depth, bytes, cum_bytes, tokens,
        cum_tokens, search, content_hash)`;
});

/** A stored or newly placed message: what its children's tree columns are computed from. */
interface Node {
  seq: number;
  depth: number;
  cumBytes: number;
  cumTokens: number;
  spineSeq: number[];
  spineDepth: number[];
}

interface KnownRow {
  seq: string;
  id: string;
  depth: number;
  cum_bytes: string;
  cum_tokens: string;
  sseq: (string | number)[];
  sdep: number[];
}

/** A child's node and skip pointer, by the rule of sql/engines/postgres/tree.ts `childSql` (Myers' jump pointers). */
function childOf(parent: Node | null, seq: number, bytes: number, tokens: number) {
  if (!parent) {
    const node = { seq, depth: 0, cumBytes: bytes, cumTokens: tokens, spineSeq: [], spineDepth: [] };
    return { node, jumpSeq: null, jumpDepth: 0 };
  }
  const [d1, d2] = parent.spineDepth;
  const skip = d1 !== undefined && d2 !== undefined && parent.depth - d1 === d1 - d2;
  const spineSeq = skip ? parent.spineSeq.slice(1) : [parent.seq, ...parent.spineSeq];
  const spineDepth = skip ? parent.spineDepth.slice(1) : [parent.depth, ...parent.spineDepth];
  const node = {
    seq,
    depth: parent.depth + 1,
    cumBytes: parent.cumBytes + bytes,
    cumTokens: parent.cumTokens + tokens,
    spineSeq,
    spineDepth,
  };
  return { node, jumpSeq: spineSeq[0]!, jumpDepth: spineDepth[0]! };
}

/**
 * Inserts the batch's new messages (parents resolved in the batch or the table); returns how many. `marks[i]`:
 * how many of the stream's payloads came before `messages[i]` (the ones it may use).
 */
async function writeMessages(
  query: Query,
  t: Tables,
  sessionId: string,
  num: string,
  messages: TransferMessage[],
  counts: ImportCounts,
  attachments: AttachmentImport,
  marks: readonly number[],
): Promise<number> {
  const parents = new Set<string>();
  for (const message of messages) {
    assertTransferMessage(message);
    if (needsEncoding(message.content)) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Message "${message.id}" holds U+0000 or a lone surrogate, which Postgres cannot store verbatim`,
        { issues: [{ path: "content", rule: "invalid" }] },
      );
    }
    if (message.parentId !== null) parents.add(message.parentId);
  }
  const ids = [...new Set([...messages.map((m) => m.id), ...parents])];
  const own = t.layout.routeParams(sessionId);
  const stored = new Set(
    (await query<{ id: string }>(storedSql(t), [num, ids, ...own], true)).map((r) => r.id),
  );
  const fresh = new Set(messages.map((m) => m.id).filter((id) => !stored.has(id)));
  if (fresh.size === 0) {
    counts.skipped += messages.length;
    return 0;
  }
  const outside = messages.flatMap((m) =>
    fresh.has(m.id) && m.parentId !== null && stored.has(m.parentId) ? [m.parentId] : [],
  );
  const known = new Map<string, Node>();
  const rows =
    outside.length > 0
      ? await query<KnownRow>(parentsSql(t), [num, [...new Set(outside)], ...own], true)
      : [];
  for (const row of rows) {
    known.set(row.id, {
      seq: Number(row.seq),
      depth: Number(row.depth),
      cumBytes: Number(row.cum_bytes),
      cumTokens: Number(row.cum_tokens),
      spineSeq: row.sseq.map(Number),
      spineDepth: row.sdep.map(Number),
    });
  }
  // Seqs in stream order, so storage order (and with it the next export) follows the stream.
  const seqs = (await query<{ seq: string }>(allocSql(t), [fresh.size])).map((r) => Number(r.seq));
  seqs.sort((a, b) => a - b);
  const placed = new Map<string, Node>();
  // An encrypted owner's messages are sealed as they are imported (their payload links stay as planned).
  const formOf = await formsOf(query, t, sessionId);
  const columns: unknown[][] = Array.from({ length: 15 }, () => []);
  let chars = 0;
  const flush = async () => {
    if (columns[0]!.length > 0) await query(insertMessagesSql(t), [num, ...columns, ...own], true);
    for (const column of columns) column.length = 0;
    chars = 0;
  };
  for (const [i, message] of messages.entries()) {
    if (stored.has(message.id) || placed.has(message.id)) {
      counts.skipped++;
      continue;
    }
    const parent =
      message.parentId === null ? null : (placed.get(message.parentId) ?? known.get(message.parentId));
    if (parent === undefined) {
      throw new SessionError(
        "PARENT_NOT_FOUND",
        `Parent message "${message.parentId}" of "${message.id}" is not in session "${sessionId}"`,
      );
    }
    const linkPayloads = await planImportLinks(
      query,
      t,
      { num, id: sessionId },
      message.id,
      message.content,
      attachments,
      marks[i]!,
    );
    const facts = messageFacts(message);
    const { node, jumpSeq, jumpDepth } = childOf(parent, seqs[placed.size]!, facts.bytes, facts.tokens);
    placed.set(message.id, node);
    await linkPayloads(node.seq);
    const createdAt = timestampParam(message.createdAt, `Message "${message.id}"`);
    const form = formOf(message.id, message.content);
    const row = [node.seq, message.id, parent?.seq ?? null, facts.role, form.content, createdAt];
    row.push(node.depth, jumpSeq, jumpDepth, facts.bytes, node.cumBytes, facts.tokens, node.cumTokens);
    row.push(searchVector(facts.text, sessionId, form, createdAt), form.hash);
    for (const [i, value] of row.entries()) columns[i]!.push(value);
    counts.inserted++;
    chars += form.content.length;
    if (chars >= STATEMENT_CHARS) await flush();
  }
  await flush();
  return placed.size;
}

/**
 * Writes one batch's items inside the batch's transaction, which holds the session's head lock (sql/transfer/import.ts), counting into `result`; answers how many messages it added.
 */
export async function writeItems(
  query: Query,
  t: Tables,
  session: { num: string; id: string },
  batch: Readonly<TransferBatch>,
  result: ImportCounted,
  attachments: AttachmentImport,
): Promise<number> {
  // Every payload is accepted before the messages are written together, so each message notes how many came
  // before it: it may use only those, as on the backends that write item by item.
  const messages: TransferMessage[] = [];
  const marks: number[] = [];
  for (const item of batch) {
    if (item.kind === "attachment") attachments.accept(item.attachment);
    else if (item.kind === "message") {
      messages.push(item.message);
      marks.push(attachments.mark());
    }
  }
  const compactions = batch.flatMap((item) => (item.kind === "compaction" ? [item.compaction] : []));
  const inserted =
    messages.length > 0
      ? await writeMessages(query, t, session.id, session.num, messages, result.messages, attachments, marks)
      : 0;
  if (compactions.length > 0) await writeCompactions(query, t, session, compactions, result.compactions);
  return inserted;
}

/** What the session import's table (sql/transfer/postgres-import.ts) runs of Postgres's own modules. */
export const POSTGRES_IMPORT: PostgresImportHelpers = {
  lockHead: lockSql,
  newestLeaf: newestLeafSql,
  refreshHead: refreshHeadSql,
  items: writeItems,
  time: timestampParam,
};
