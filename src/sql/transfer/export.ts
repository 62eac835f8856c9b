/**
 * The transfer of a SQL store, written once for SQLite and Postgres: every listing of the export (registered
 * sessions, then sessions holding data that listing did not name; a session's messages and overlays; blocks and
 * entries) is read in keyset pages as programs (sql/program.ts) over a table per engine (sqlite-export.ts and
 * postgres-export.ts here), so exporting a store of any size holds one page at a time. Opening what is stored sealed
 * or split (an owner's key, SQLite's chunks) is the engine's own code behind the same table, handed in by the
 * engine's transfer class. An export is not a snapshot: one taken while a session is written to
 * may mix states. Imports write through each engine's own writers (see `openImport`), whose plans differ on purpose.
 */

import type { OpenedEntry } from "../../context/entry-keys.js";
import type { ContextRecord } from "../../contract/context.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { SessionRegistry } from "../../contract/registry.js";
import type { TransferMessage, TransferRow } from "../../contract/transfer.js";
import type { ChangeFeed } from "../../store/feed/feed.js";
import { type SessionSums, StoreTransfer } from "../../store/transfer/base.js";
import { ParentsFirst } from "../../store/transfer/parents-first.js";
import type { Program, Row, Statement } from "../program.js";

// Rows per read: big enough that paging costs little, small enough that memory stays flat on huge sessions.
export const PAGE = 1000;

type Maybe<T> = T | Promise<T>;

/** A page of a listing: its rows, and the row whose key the next page starts after (none: the listing ended). */
export interface Page {
  rows: Row[];
  more: Row | undefined;
}

/** A page read by one statement: full when it holds {@link PAGE} rows. */
export function* page(statement: Statement): Program<Page> {
  const rows = yield statement;
  return { rows, more: rows.length < PAGE ? undefined : rows[rows.length - 1] };
}

/** A session's head as a transfer reads it: its number and id (an owner's sealed content is bound to the id). */
export interface TransferHead {
  num: number | string;
  session_id: string;
}

/** A stored message as an export page reads it (bigint columns as the engine answers them). */
export interface ExportMessageRow {
  seq: string | number;
  parent_seq?: string | number | null;
  id: string;
  parent_id: string | null;
  role: string;
  created_at: string;
  /** As stored: the engine opens it ({@link ExportTable.openMessage}). */
  content: unknown;
}

/**
 * One engine's statements and openers for an export. Keys are arrays of parameters, so each engine chooses its
 * own (Postgres carries `updated_at` as UTC text, SQLite as it is stored).
 */
export interface ExportTable<Head extends TransferHead> {
  /** Drives a program: synchronously on SQLite, one awaited round trip per statement on Postgres. */
  run<T>(program: Program<T>): Maybe<T>;
  /** The key below every registered session. */
  readonly registeredStart: readonly unknown[];
  /** Registered sessions after `after`, oldest activity first; rows carry `id`, `after_at` and `activity`. */
  registered(after: readonly unknown[]): Statement;
  /** Sessions with data that the registered listing (which ended at `last`) did not name, by id after `afterId`. */
  unregistered(last: readonly unknown[], afterId: string | null): Statement;
  head(sessionId: string): Statement;
  leafId(head: Head): Program<string | null>;
  sums(head: Head): Program<SessionSums | undefined>;
  /** A page of the session's messages after seq `after`, in storage order. */
  messages(head: Head, after: unknown): Program<Page>;
  /** Postgres draws a seq before the append waits for the lock, so a child may come before its parent. */
  readonly parentsFirst: boolean;
  openMessage(head: Head, row: ExportMessageRow): Maybe<string>;
  compactions(head: Head, after: unknown): Statement;
  openCompaction(head: Head, row: Row): Maybe<StoredCompaction>;
  attachment(hash: string): Maybe<Uint8Array | null>;
  blocks(after: string | null): Statement;
  openBlock(row: Row): Maybe<string>;
  entries(after: unknown): Statement;
  openEntry(row: Row): Maybe<OpenedEntry>;
  /** A block's or entry's record, from its `session_id` and `owner` columns (context/records.ts). */
  record(row: Row): ContextRecord | undefined;
}

function* one(statement: Statement): Program<Row[]> {
  return yield statement;
}

/** The export of a SQL store (see the module comment); each engine's class adds its import writers. */
export abstract class SqlTransfer<Head extends TransferHead> extends StoreTransfer<Head> {
  constructor(
    private readonly table: ExportTable<Head>,
    registry: Pick<SessionRegistry, "get">,
    publisher?: { readonly feed: ChangeFeed },
  ) {
    super(registry, publisher);
  }

  /** Reads a listing page by page, from `start`, each page after the key of the last one's last row. */
  private async *pages<K>(read: (after: K) => Program<Page>, start: K, key: (row: Row) => K) {
    for (let after = start; ; ) {
      const { rows, more } = await this.table.run(read(after));
      yield* rows;
      if (!more) return;
      after = key(more);
    }
  }

  async *sessionIds(): AsyncGenerator<string> {
    const t = this.table;
    // Oldest activity first, so importing the ids in this order reproduces list()'s order, ties included.
    const key = (row: Row): readonly unknown[] => [row.after_at, row.activity];
    let last = t.registeredStart;
    for await (const row of this.pages((after) => page(t.registered(after)), last, key)) {
      yield row.id as string;
      last = key(row);
    }
    // Then the sessions holding data that the pass above did not name: never registered, or registered after it
    // read past their place (their activity lies beyond its last key). A session registered between the two
    // passes was otherwise in neither.
    const unregistered = (after: string | null) => page(t.unregistered(last, after));
    for await (const row of this.pages(unregistered, null, (r) => r.session_id as string))
      yield row.session_id as string;
  }

  protected assertOpen(): void {}

  protected async readHead(sessionId: string): Promise<Head | undefined> {
    return (await this.table.run(one(this.table.head(sessionId))))[0] as Head | undefined;
  }

  protected async readLeafId(head: Head): Promise<string | null> {
    return this.table.run(this.table.leafId(head));
  }

  protected async readSums(head: Head): Promise<SessionSums | undefined> {
    return this.table.run(this.table.sums(head));
  }

  protected async *readMessages(head: Head): AsyncGenerator<TransferMessage> {
    const order = this.table.parentsFirst ? new ParentsFirst<ExportMessageRow>() : undefined;
    const rows = this.pages(
      (after) => this.table.messages(head, after),
      0 as unknown,
      (r) => r.seq,
    );
    for await (const found of rows) {
      const row = found as unknown as ExportMessageRow;
      // An export is opened (the copy is the app's to protect); an import seals again.
      row.content = await this.table.openMessage(head, row);
      if (!order) yield toMessage(row);
      else for (const ready of order.push(row)) yield toMessage(ready);
    }
    for (const left of order?.rest() ?? []) yield toMessage(left);
  }

  protected readAttachment(hash: string): Maybe<Uint8Array | null> {
    return this.table.attachment(hash);
  }

  protected async *readCompactions(head: Head): AsyncGenerator<StoredCompaction> {
    const rows = this.pages(
      (after) => page(this.table.compactions(head, after)),
      0 as unknown,
      (r) => r.seq,
    );
    // One row at a time: a sealed summary is opened as the export reaches it.
    for await (const row of rows) yield await this.table.openCompaction(head, row);
  }

  async *exportRows(): AsyncGenerator<TransferRow> {
    const t = this.table;
    // Sealed blocks and entries are exported opened (sealed-context.ts), as sealed messages are.
    const blocks = this.pages(
      (after: string | null) => page(t.blocks(after)),
      null,
      (r) => r.key as string,
    );
    for await (const row of blocks) {
      const content = await t.openBlock(row);
      yield { kind: "block", key: row.key as string, content, ...t.record(row) };
    }
    // Entries in storage order: search ranks ties newest first, so the order is part of what must survive.
    for await (const row of this.pages(
      (after) => page(t.entries(after)),
      0 as unknown,
      (r) => r.seq,
    )) {
      // The real key: an encrypted owner's row keeps a keyed digest of it (entry-keys.ts).
      const { key, content } = await t.openEntry(row);
      yield { kind: "entry", label: row.label as string, key, content, ...t.record(row) };
    }
  }
}

function toMessage(row: ExportMessageRow): TransferMessage {
  const { id, parent_id: parentId, role, created_at: createdAt, content } = row;
  return { id, parentId, role, createdAt, content: content as string };
}
