/**
 * The rows of a path that call given tools (`SessionProvider.getToolMessages`), written once for SQLite and
 * Postgres: one walk of the path tests each row's stored JSON for the tool names without parsing it, and only the
 * rows that pass are read, opened and parsed, in bounded groups, then their media restored. The statement text is
 * each engine's table beside this file (sqlite.ts: GLOB over the tree columns; postgres.ts: LIKE ANY, the leaf found
 * in the same statement, with the Citus route clauses); opening a row (SQLite: continuation rows and sealed content;
 * Postgres: sealed content) and restoring media are each engine's own helpers, handed in by its session provider.
 */
import type { SessionMessage } from "../../contract/message.js";
import { parseMessage } from "../../message/json.js";
import { carriesTool } from "../../message/tool-parts.js";
import type { Program, Row, Step } from "../program.js";

/** Rows read (and restored) per statement. */
const READ_GROUP = 100;

/** An engine's statements of a path's tool rows, for one session and one leaf. */
export interface ToolRowStatements {
  /** The seqs (rows `seq`) of the path whose stored JSON may name one of `names`, root first. */
  candidates(names: readonly string[]): Step;
  /** The stored content (rows `seq`, `content`) of the rows `seqs`, as {@link candidates} answered them. */
  contents(seqs: readonly unknown[]): Step;
  /** Each row's stored content (undefined: the row is gone) as message JSON, null for none. */
  open(stored: readonly unknown[]): Program<(string | null)[]>;
  /** The messages with their offloaded media restored. */
  hydrate(messages: SessionMessage[]): Program<SessionMessage[]>;
}

/** The messages on the path with a part calling one of `names`, root first, restored. */
export function* toolMessages(s: ToolRowStatements, names: readonly string[]): Program<SessionMessage[]> {
  const seqs = (yield s.candidates(names)).map((row) => row.seq);
  const out: SessionMessage[] = [];
  for (let start = 0; start < seqs.length; start += READ_GROUP) {
    const group = seqs.slice(start, start + READ_GROUP);
    const rows: Row[] = yield s.contents(group);
    const contents = new Map(rows.map((row) => [String(row.seq), row.content]));
    const stored = group.map((seq) => (contents.has(String(seq)) ? contents.get(String(seq)) : undefined));
    const found: SessionMessage[] = [];
    for (const json of yield* s.open(stored)) {
      const message = json === null ? null : parseMessage(json);
      if (message && carriesTool(message, names)) found.push(message);
    }
    out.push(...(yield* s.hydrate(found)));
  }
  return out;
}
