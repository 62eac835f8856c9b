import type { Fact, FactStatus } from "../../contract/facts.js";
import type { GraphItem } from "../../contract/graph-items.js";
import type { CompactionDetails, StoredCompaction } from "../../contract/message.js";
import type { SessionInfo } from "../../contract/registry.js";
import type {
  TransferAttachment,
  TransferCheckpoint,
  TransferItem,
  TransferMessage,
  TransferRecord,
  TransferRow,
  TransferSession,
} from "../../contract/transfer.js";
import { hasMessageFields } from "../../message/json.js";
import { CliError } from "../errors.js";
import { usageOf } from "../usage.js";
import { decodeCheckpoint, encodeCheckpoint } from "./checkpoint-lines.js";
import { Fields } from "./fields.js";
import { decodeItem } from "./item-lines.js";

/** The `format` value of the first line of every export. */
export const EXPORT_FORMAT = "agent-session-export";
/**
 * The version this code writes; it reads it and every older one, and refuses newer ones. Version 2 added each
 * session's owner and pin (version 1 files carry neither: their import warns, see `ownerless`) and each block's and
 * entry's record (`sessionId` or `owner`; without one, the import applies the legacy key rule). Version 3 added
 * learned facts (`fact` lines after the blocks and entries, and their count in the end record). Version 4 added a
 * session's checkpoints (`checkpoint` lines after its overlays: a LangGraph thread's, checkpoint-lines.ts, and their
 * count in the end record) and LangGraph store items (`item` lines after the facts of an owner-wide or store-wide
 * export, item-lines.ts, and their count).
 */
export const EXPORT_VERSION = 4;

/** Record counts, as the last line of an export states them. */
export interface ExportCounts {
  sessions: number;
  messages: number;
  compactions: number;
  blocks: number;
  entries: number;
  facts: number;
  checkpoints: number;
  items: number;
}

/** Counts of nothing yet: where an export or a read of one starts counting. */
export function noCounts(): ExportCounts {
  return {
    sessions: 0,
    messages: 0,
    compactions: 0,
    blocks: 0,
    entries: 0,
    facts: 0,
    checkpoints: 0,
    items: 0,
  };
}

/** A line of an export after validation, in the store's transfer shapes. */
export type ExportRecord =
  | { type: "header"; version: number }
  | {
      type: "session";
      session: TransferSession;
      /** A registered session whose record carries no owner and pin (written by a version 1 export). */
      ownerless: boolean;
    }
  | { type: "attachment"; sessionId: string; attachment: TransferAttachment }
  | { type: "message"; sessionId: string; message: TransferMessage; unreadable: boolean }
  | { type: "compaction"; sessionId: string; compaction: StoredCompaction }
  | { type: "checkpoint"; sessionId: string; checkpoint: TransferCheckpoint }
  | { type: "row"; row: TransferRow }
  | { type: "fact"; fact: Fact }
  | { type: "item"; item: GraphItem }
  | { type: "end"; counts: ExportCounts };

// Every writer below builds its object literal in one fixed key order, so the same data is always the same bytes.

/** The first line. */
export function encodeHeader(): string {
  return JSON.stringify({ type: "header", format: EXPORT_FORMAT, version: EXPORT_VERSION });
}

/** The line of one item of a session's transfer stream. */
export function encodeItem(sessionId: string, item: TransferItem): string {
  if (item.kind === "session") {
    const { id, info, leafId } = item.session;
    return JSON.stringify({ type: "session", id, leaf: leafId, registry: info ? encodeInfo(info) : null });
  }
  if (item.kind === "attachment") {
    // A payload as base64, once per file, before the first message that points at it (see writeExport).
    const { hash, bytes } = item.attachment;
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
    return JSON.stringify({ type: "attachment", session: sessionId, hash, data });
  }
  if (item.kind === "checkpoint") return encodeCheckpoint(sessionId, item.checkpoint);
  if (item.kind === "compaction") {
    const c = item.compaction;
    return JSON.stringify({
      type: "compaction",
      session: sessionId,
      id: c.id,
      from: c.fromMessageId,
      to: c.toMessageId,
      summary: c.summary,
      details: c.details ?? null,
      createdAt: c.createdAt,
    });
  }
  const m = item.message;
  const base = {
    type: "message",
    session: sessionId,
    id: m.id,
    parent: m.parentId,
    role: m.role,
    createdAt: m.createdAt,
  };
  const message = parseObject(m.content);
  // The stored JSON is written as a nested object (readable, diffable); a row no read can use (it no longer parses,
  // or lacks an id, role or parts) travels as text, which the import refuses or, asked to, leaves out.
  return JSON.stringify(
    message === undefined || !hasMessageFields(message) ? { ...base, raw: m.content } : { ...base, message },
  );
}

function encodeInfo(info: SessionInfo) {
  return {
    name: info.name,
    // Whose session it is and whether retention keeps it: without them an owner's own view no longer finds it.
    owner: info.owner ?? null,
    pinned: info.pinned === true,
    parentSessionId: info.parent_session_id,
    model: info.model,
    source: info.source,
    endReason: info.end_reason,
    createdAt: info.created_at,
    updatedAt: info.updated_at,
    usage: usageOf(info),
  };
}

/** The line of a context block or a searchable entry, with whose it is when the row has a record. */
export function encodeRow(row: TransferRow): string {
  // Without its record a moved row would be re-attributed by the legacy key rule on import: an owner's
  // `profile_bob` no longer erased with bob, or a session's block left unrecorded.
  const record =
    row.sessionId !== undefined
      ? { sessionId: row.sessionId }
      : row.owner !== undefined
        ? { owner: row.owner }
        : {};
  return row.kind === "block"
    ? JSON.stringify({ type: "block", key: row.key, content: row.content, ...record })
    : JSON.stringify({ type: "entry", label: row.label, key: row.key, content: row.content, ...record });
}

/** The line of a learned fact: its scope (owner or session), what it says, its sources, its state and producer. */
export function encodeFact(f: Fact): string {
  return JSON.stringify({
    type: "fact",
    owner: f.owner,
    session: f.sessionId,
    id: f.id,
    text: f.text,
    about: f.about,
    observedAt: f.observedAt,
    producer: f.producer,
    sources: f.sources.map((s) => ({ session: s.sessionId, message: s.messageId })),
    status: f.status,
    supersededBy: f.supersededBy,
    createdAt: f.createdAt,
  });
}

/** The last line: how many records of each kind came before, so a truncated file is detected. */
export function encodeEnd(counts: ExportCounts): string {
  const { sessions, messages, compactions, blocks, entries, facts, checkpoints, items } = counts;
  return JSON.stringify({
    type: "end",
    sessions,
    messages,
    compactions,
    blocks,
    entries,
    facts,
    checkpoints,
    items,
  });
}

/** A fact line's fields (their values are checked by the store's import, FactStore.importFacts). */
function decodeFact(f: Fields, record: Record<string, unknown>, line: number): Fact {
  const sources = record.sources;
  if (!Array.isArray(sources)) f.fail('"sources" must be an array');
  return {
    id: f.string("id", true),
    owner: f.nullableString("owner"),
    sessionId: f.nullableString("session"),
    text: f.string("text"),
    about: f.nullableString("about"),
    observedAt: f.count("observedAt"),
    producer: f.string("producer"),
    sources: (sources as unknown[]).map((source, i) => {
      if (source === null || typeof source !== "object") f.fail(`"sources.${i}" must be an object`);
      const s = new Fields(source as Record<string, unknown>, line, `sources.${i}.`);
      return { sessionId: s.string("session"), messageId: s.string("message") };
    }),
    status: f.string("status") as FactStatus,
    supersededBy: f.nullableString("supersededBy"),
    createdAt: f.count("createdAt"),
  };
}

function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The registry row, with its owner and pin when the record has them (`ownerless` when it has neither). */
function decodeInfo(id: string, f: Fields): { info: SessionInfo; ownerless: boolean } {
  const r = f.nested("registry");
  const usage = r.nested("usage");
  const ownerless = !r.has("owner") && !r.has("pinned");
  const owner = ownerless ? null : r.nullableString("owner");
  const pinned = !ownerless && r.boolean("pinned");
  const info: SessionInfo = {
    id,
    name: r.string("name"),
    parent_session_id: r.nullableString("parentSessionId"),
    model: r.nullableString("model"),
    source: r.nullableString("source"),
    input_tokens: usage.count("inputTokens"),
    output_tokens: usage.count("outputTokens"),
    cache_read_tokens: usage.count("cacheReadTokens"),
    cache_write_tokens: usage.count("cacheWriteTokens"),
    estimated_cost: usage.amount("cost"),
    end_reason: r.nullableString("endReason"),
    created_at: r.time("createdAt"),
    updated_at: r.time("updatedAt"),
    // The owner is checked as `create` checks it by the import's check of the session (assertTransferHeader).
    ...(owner === null ? {} : { owner }),
    ...(pinned ? { pinned: true as const } : {}),
  };
  return { info, ownerless };
}

/** Checks the first line of a file: the header of a version this code reads, or a clear "not an export". */
export function decodeHeader(text: string): { type: "header"; version: number } {
  let record: ExportRecord | undefined;
  try {
    record = decodeLine(text, 1);
  } catch (error) {
    // A newer version is a real header: say so instead of "not an export".
    if (/newer than/.test((error as Error).message)) throw error;
  }
  if (record?.type !== "header") {
    throw new CliError(
      "line 1: not an agent-session export (the first line must be its header)",
      "INVALID_FILE",
    );
  }
  return record;
}

/** Parses and validates one line (1-based `line` for messages); unknown fields are ignored within a version. */
export function decodeLine(text: string, line: number): ExportRecord {
  try {
    return decodeRecord(text, line);
  } catch (error) {
    // JSON.parse takes any depth, but re-serialising a message (and every later walk of it) recurses: nesting
    // deep enough to overflow the stack is a bad record like any other, named by its line.
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      throw new CliError(`line ${line}: the record is nested too deeply to be read`, "INVALID_FILE");
    }
    throw error;
  }
}

/**
 * A row's record as the line carries it (absent: the import gives it the legacy rule's). Both fields are passed on
 * when present, so the transfer schema's check (import's first pass) refuses a line naming both.
 */
function decodeRowRecord(f: Fields): TransferRecord {
  return {
    ...(f.has("sessionId") ? { sessionId: f.string("sessionId") } : {}),
    ...(f.has("owner") ? { owner: f.string("owner") } : {}),
  };
}

function decodeRecord(text: string, line: number): ExportRecord {
  const record = parseObject(text);
  if (!record) throw new CliError(`line ${line}: not a JSON object`, "INVALID_FILE");
  const f = new Fields(record, line);
  switch (record.type) {
    case "header": {
      if (record.format !== EXPORT_FORMAT)
        f.fail(`not an agent-session export (format ${JSON.stringify(record.format)})`);
      const version = f.count("version");
      if (version > EXPORT_VERSION) {
        f.fail(
          `export format version ${version} is newer than this agent-session understands (${EXPORT_VERSION})`,
        );
      }
      return { type: "header", version };
    }
    case "session": {
      const id = f.string("id");
      const registry = record.registry === null ? null : decodeInfo(id, f);
      return {
        type: "session",
        session: { id, leafId: f.nullableString("leaf"), info: registry?.info ?? null },
        ownerless: registry?.ownerless ?? false,
      };
    }
    case "message": {
      const base = { id: f.string("id", true), parentId: f.nullableString("parent"), role: f.string("role") };
      const content = "message" in record ? JSON.stringify(f.object("message")) : f.string("raw");
      return {
        type: "message",
        sessionId: f.string("session"),
        message: { ...base, createdAt: f.time("createdAt"), content },
        // What the export writes for a stored row that no longer parses (see encodeItem).
        unreadable: !("message" in record) && !hasMessageFields(parseObject(content)),
      };
    }
    case "attachment": {
      const hash = f.string("hash");
      if (!/^[0-9a-f]{64}$/.test(hash)) f.fail('"hash" must be 64 lower-case hex digits (a SHA-256)');
      const bytes = Buffer.from(f.string("data"), "base64");
      return { type: "attachment", sessionId: f.string("session"), attachment: { hash, bytes } };
    }
    case "compaction": {
      const details = record.details === null ? null : f.object("details");
      const compaction: StoredCompaction = {
        id: f.string("id", true),
        summary: f.string("summary"),
        fromMessageId: f.string("from", true),
        toMessageId: f.string("to", true),
        createdAt: f.time("createdAt"),
      };
      if (details) compaction.details = details as CompactionDetails;
      return { type: "compaction", sessionId: f.string("session"), compaction };
    }
    case "block":
      return {
        type: "row",
        row: { kind: "block", key: f.string("key"), content: f.string("content"), ...decodeRowRecord(f) },
      };
    case "entry":
      return {
        type: "row",
        row: {
          kind: "entry",
          label: f.string("label"),
          key: f.string("key"),
          content: f.string("content"),
          ...decodeRowRecord(f),
        },
      };
    case "fact":
      return { type: "fact", fact: decodeFact(f, record, line) };
    case "checkpoint":
      return { type: "checkpoint", ...decodeCheckpoint(f, record, line) };
    case "item":
      return { type: "item", item: decodeItem(f, record) };
    case "end":
      return {
        type: "end",
        counts: {
          sessions: f.count("sessions"),
          messages: f.count("messages"),
          compactions: f.count("compactions"),
          blocks: f.count("blocks"),
          entries: f.count("entries"),
          // Version 3 on: a file before it holds no facts.
          facts: f.has("facts") ? f.count("facts") : 0,
          // Version 4 on: a file before it holds no checkpoints.
          checkpoints: f.has("checkpoints") ? f.count("checkpoints") : 0,
          items: f.has("items") ? f.count("items") : 0,
        },
      };
    default:
      return f.fail(`unknown record type ${JSON.stringify(record.type)}`);
  }
}
