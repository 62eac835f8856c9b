import { recordOf } from "../../context/records.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { TransferMessage, TransferRow, TransferSession } from "../../contract/transfer.js";
import {
  type RowImportWriter,
  type SessionImportWriter,
  type SessionSums,
  StoreTransfer,
} from "../../store/transfer/base.js";
import type { PostgresBackend } from "../backend.js";
import { onSession, sessionParam } from "../citus/route.js";
import type { Executor } from "../connection/client.js";
import { loadAttachments } from "../media/attachments.js";
import type { PostgresSessionRegistry } from "../registry.js";
import { statement, type Tables } from "../schema.js";
import { type BlockRow, type EntryRow, entryOpener, readBlockRow } from "../sealed-context.js";
import { openContent } from "../stored-form.js";
import { compactionsOf, type StoredCompactionRow } from "../summaries.js";
import { isoSql } from "../tree.js";
import { sessionImport } from "./import.js";
import { rowsImport } from "./rows.js";

type Ready = () => Promise<Executor>;

// Rows per read: big enough that paging costs little, small enough that memory stays flat on huge sessions.
const PAGE = 1000;

// Registered sessions oldest activity first. The keyset carries `updated_at` as UTC text to the microsecond (era
// included), which reads back as the same instant whatever the connection's DateStyle or TimeZone.
const AFTER_AT = `to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US BC')`;
const registeredSql = statement(
  (t) => `SELECT s.id, ${AFTER_AT} AS after_at, s.activity FROM ${t.sessions} s
    WHERE (s.updated_at, s.activity) > ($2::timestamp AT TIME ZONE 'UTC', $3::bigint)
    ORDER BY s.updated_at, s.activity LIMIT $1`,
);
// Sessions holding data that the registered listing did not name, by id in UTF-8 byte order (`COLLATE "C"`, index
// agent_session_heads_id_c): never registered, or registered after that listing read past their place (their
// activity lies beyond its last key, $1 and $2). A session registered between the two listings was otherwise in
// neither. In the Citus layout the overlays' subquery names the session too: Citus joins co-located tables only on
// their distribution column.
function unregistered(after: string): (t: Tables) => string {
  return statement(
    (t) => `SELECT h.session_id FROM ${t.heads} h
      WHERE ${after} AND NOT EXISTS (SELECT 1 FROM ${t.sessions} s WHERE s.id = h.session_id
          AND (s.updated_at, s.activity) <= ($1::timestamp AT TIME ZONE 'UTC', $2::bigint))
        AND (h.message_count > 0 OR EXISTS (SELECT 1 FROM ${t.compactions} c WHERE c.session_num = h.num${
          t.distributed ? " AND c.session_id = h.session_id" : ""
        }))
      ORDER BY h.session_id COLLATE "C" LIMIT $3`,
  );
}
// A first page has no key: "" is a real session id (the default session), so no string can stand below them all.
const unregisteredSql = unregistered("$4::text IS NULL");
const unregisteredAfterSql = unregistered(`h.session_id COLLATE "C" > $4::text`);

const headSql = statement((t) => `SELECT num, leaf_id, session_id FROM ${t.heads} WHERE session_id = $1`);
// In the Citus layout a session's reads also name it (the last parameter), so each runs on its one node (and the
// parent join, which is not on the distribution column, is allowed there).
const footprintSql = statement(
  (t) => `SELECT count(*) AS messages, sum(m.bytes) AS bytes, sum(m.tokens) AS tokens,
      (SELECT count(*) FROM ${t.compactions} c WHERE c.session_num = $1::bigint${onSession(t, "c", "$2::text")}) AS compactions
    FROM ${t.messages} m WHERE m.session_num = $1::bigint${onSession(t, "m", "$2::text")}`,
);
const messagesSql = statement(
  (t) => `SELECT m.seq, m.parent_seq, m.id, p.id AS parent_id, m.role, m.content,
      ${isoSql("m.created_at")} AS created_at
    FROM ${t.messages} m LEFT JOIN ${t.messages} p ON p.seq = m.parent_seq${onSession(t, "p", "m.session_id")}
    WHERE m.session_num = $1::bigint AND m.seq > $3::bigint${onSession(t, "m", "$4::text")} ORDER BY m.seq LIMIT $2`,
);
const compactionsSql = statement(
  (t) => `SELECT c.seq, c.id, c.summary, c.summary_json, c.from_message_id, c.to_message_id, c.details,
      ${isoSql("c.created_at")} AS created_at
    FROM ${t.compactions} c
    WHERE c.session_num = $1::bigint AND c.seq > $3::bigint${onSession(t, "c", "$4::text")} ORDER BY c.seq LIMIT $2`,
);
function blocks(after: string): (t: Tables) => string {
  return statement(
    (t) => `SELECT key, content, content_json, sealed, session_id, owner FROM ${t.blocks} WHERE ${after}
      ORDER BY key COLLATE "C" LIMIT $1`,
  );
}
const blocksSql = blocks("$2::text IS NULL");
const blocksAfterSql = blocks(`key COLLATE "C" > $2::text`);
const entriesSql = statement(
  (t) => `SELECT seq, label, key, content, content_json, sealed_chars, session_id, owner FROM ${t.entries}
    WHERE seq > $2::bigint
    ORDER BY seq LIMIT $1`,
);

/** A session's head as a transfer reads it (bigint as pg returns it). */
interface Head {
  num: string;
  leaf_id: string | null;
  session_id: string;
}

/** A stored message as a transfer page reads it (bigint columns as pg returns them). */
interface MessageRow {
  seq: string | number;
  parent_seq: string | number | null;
  id: string;
  parent_id: string | null;
  role: string;
  created_at: string;
  content: string;
}

/**
 * Lossless, streaming export and import for a {@link PostgresStore}, with the order, idempotency and latest-leaf
 * rules of SQLite's. Every listing is read in keyset pages along an index, so exporting a store of any size holds
 * one page at a time. An export is not a snapshot: one taken while the session is written to may mix states.
 */
export class PostgresTransfer extends StoreTransfer<Head> {
  /**
   * `store`: the feed and change log an import publishes to, read at each import (the store makes them after
   * this); omitted by adoption, whose imports are not published.
   */
  constructor(
    private readonly ready: Ready,
    private readonly t: Tables,
    registry: PostgresSessionRegistry,
    private readonly store?: Pick<PostgresBackend, "feed" | "changeLog">,
  ) {
    super(registry, store);
  }

  /**
   * Reads a listing page by page: `first` with the `start` key, then `next` after the key of each page's last row.
   * Parameters are `params`, then the page size, then the key, then `tail`.
   */
  private async *pages<R>(
    first: (t: Tables) => string,
    next: (t: Tables) => string,
    params: readonly unknown[],
    start: readonly unknown[],
    key: (row: R) => readonly unknown[],
    tail: readonly unknown[] = [],
  ): AsyncGenerator<R> {
    const executor = await this.ready();
    for (let sql = first, after = start; ; sql = next) {
      const rows = await executor.query<R>(sql(this.t), [...params, PAGE, ...after, ...tail], true);
      yield* rows;
      if (rows.length < PAGE) return;
      after = key(rows[rows.length - 1]!);
    }
  }

  async *sessionIds(): AsyncGenerator<string> {
    // Oldest activity first, so importing the ids in this order reproduces list()'s order, ties included. The
    // first key, -infinity, lies below every time an ISO-8601 string can name.
    type Registered = { id: string; after_at: string; activity: string };
    const key = (r: Registered) => [r.after_at, r.activity];
    const registered = this.pages<Registered>(registeredSql, registeredSql, [], ["-infinity", 0], key);
    let last: readonly unknown[] = ["-infinity", 0];
    for await (const row of registered) {
      yield row.id;
      last = key(row);
    }
    const unregistered = this.pages<{ session_id: string }>(
      unregisteredSql,
      unregisteredAfterSql,
      last,
      [null],
      (r) => [r.session_id],
    );
    for await (const row of unregistered) yield row.session_id;
  }

  protected assertOpen(): void {}

  protected async readHead(sessionId: string): Promise<Head | undefined> {
    const executor = await this.ready();
    const [head] = await executor.query<Head>(headSql(this.t), [sessionId], true);
    return head;
  }

  protected async readLeafId(head: Head): Promise<string | null> {
    return head.leaf_id;
  }

  protected async readSums(head: Head): Promise<SessionSums | undefined> {
    const executor = await this.ready();
    const [sums] = await executor.query<SessionSums>(
      footprintSql(this.t),
      [head.num, ...sessionParam(this.t, head.session_id)],
      true,
    );
    return sums;
  }

  protected async *readMessages(head: Head): AsyncGenerator<TransferMessage> {
    const order = new ParentsFirst();
    const seqKey = (r: { seq: string | number }) => [r.seq];
    const own = sessionParam(this.t, head.session_id);
    for await (const row of this.pages<MessageRow>(messagesSql, messagesSql, [head.num], [0], seqKey, own)) {
      // An export is opened, as on SQLite (the copy is the app's to protect); an import seals again.
      const executor = await this.ready();
      row.content = await openContent(executor.query, this.t, head.session_id, row.content, row.id);
      for (const ready of order.push(row)) yield toMessage(ready);
    }
    for (const left of order.rest()) yield toMessage(left);
  }

  protected async readAttachment(hash: string): Promise<Uint8Array | null> {
    const executor = await this.ready();
    return (await loadAttachments(executor.query, this.t, [hash])).get(hash) ?? null;
  }

  protected async *readCompactions(head: Head): AsyncGenerator<StoredCompaction> {
    type Compaction = StoredCompactionRow & { seq: string };
    const seqKey = (r: { seq: string }) => [r.seq];
    const own = sessionParam(this.t, head.session_id);
    const compactions = this.pages<Compaction>(compactionsSql, compactionsSql, [head.num], [0], seqKey, own);
    const executor = await this.ready();
    for await (const { seq: _seq, ...row } of compactions) {
      // One row at a time: a sealed summary is opened as the export reaches it.
      yield* await compactionsOf(executor.query, this.t, head.session_id, [row]);
    }
  }

  /** One session import (see import.ts), logged in the store's change log when it has one. */
  protected openImport(header: TransferSession): Promise<SessionImportWriter> {
    return sessionImport(this.ready, this.t, header, this.store?.changeLog);
  }

  protected openRows(): Promise<RowImportWriter> {
    return rowsImport(this.ready, this.t);
  }

  async *exportRows(): AsyncGenerator<TransferRow> {
    // Sealed blocks and entries are exported opened (sealed-context.ts), as sealed messages are.
    const executor = await this.ready();
    const query = executor.query.bind(executor);
    type Recorded = { session_id: string | null; owner: string | null };
    type Block = BlockRow & { key: string } & Recorded;
    for await (const row of this.pages<Block>(blocksSql, blocksAfterSql, [], [null], (r) => [r.key])) {
      const content = await readBlockRow(query, this.t, row.key, row);
      yield { kind: "block", key: row.key, content, ...recordOf(row.session_id, row.owner) };
    }
    // Entries in storage order: search ranks ties newest first, so the order is part of what must survive.
    type Entry = EntryRow & { seq: string; label: string } & Recorded;
    for await (const row of this.pages<Entry>(entriesSql, entriesSql, [], [0], (r) => [r.seq])) {
      const content = await entryOpener(query, this.t, row.label)(row);
      yield {
        kind: "entry",
        label: row.label,
        key: row.key,
        content,
        ...recordOf(row.session_id, row.owner),
      };
    }
  }
}

function toMessage(row: MessageRow): TransferMessage {
  const { id, parent_id: parentId, role, created_at: createdAt, content } = row;
  return { id, parentId, role, createdAt, content };
}

/**
 * Puts parents before their children while reading in storage order. Postgres draws an append's seq before the
 * append waits for the session's lock, so under concurrent appenders a child can hold a smaller seq than its
 * parent. Such a row (and anything below it) waits until its parent has gone out, then follows it at once, so
 * siblings keep their seq order (getBranches' order); only the few rows of such a race are ever held.
 */
class ParentsFirst {
  private readonly waiting = new Map<number, MessageRow[]>();
  private readonly held = new Map<number, MessageRow>();

  *push(row: MessageRow): Generator<MessageRow> {
    const seq = Number(row.seq);
    const parent = row.parent_seq === null ? null : Number(row.parent_seq);
    if (parent !== null && (parent > seq || this.held.has(parent))) {
      this.held.set(seq, row);
      const siblings = this.waiting.get(parent);
      if (siblings) siblings.push(row);
      else this.waiting.set(parent, [row]);
      return;
    }
    const stack = [row];
    for (let next = stack.pop(); next; next = stack.pop()) {
      yield next;
      const children = this.waiting.get(Number(next.seq));
      if (!children) continue;
      this.waiting.delete(Number(next.seq));
      for (let i = children.length - 1; i >= 0; i--) {
        this.held.delete(Number(children[i]!.seq));
        stack.push(children[i]!);
      }
    }
  }

  /** Rows whose parent never came (it was deleted while the export ran), in storage order. */
  rest(): MessageRow[] {
    return [...this.held.values()].sort((a, b) => Number(a.seq) - Number(b.seq));
  }
}
