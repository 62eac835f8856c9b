import { z } from "zod";
import type { ChangeEvent } from "../../contract/feed.js";
import type { SessionMessage, StoredCompaction } from "../../contract/message.js";
import { SessionError } from "../../errors.js";
import { parseInput } from "../../schema/parse.js";
import { numberWhere } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";
import type { LoggedChange } from "./remote.js";

/** A change-log row as both SQL backends store it (`ids` and `data` are JSON text). */
export interface ChangeRow {
  seq: number | string;
  origin: string;
  session_id: string;
  kind: string;
  ids: string;
  parent_id: string | null;
  data: string | null;
}

/** Rows kept in a change log by default; older ones are pruned in bounded batches. */
export const DEFAULT_RETAIN = 10_000;
/** Rows read per poll or replay page. */
export const PAGE_ROWS = 500;
/** Rows deleted per pruning statement (bounded, so one write never pays for a backlog). */
export const PRUNE_BATCH = 1_000;
/** Prune once every this many recorded rows. */
export const PRUNE_EVERY = 256;

/** Options of a store's change log. */
export interface ChangeLogOptions {
  /** Rows kept for resuming subscribers (default 10,000); a cursor older than that gets a `reset` event. */
  retain?: number;
  /** How often another process's writes are looked for, in ms (SQLite; Postgres polls only without LISTEN). */
  pollMs?: number;
}

/**
 * The kind of a row that says only "facts were stored" (Postgres, postgres/feed/facts-log.ts): no session, no ids,
 * no content. Never an event: a replay skips it, a watcher tells the vector worker (docs/FACTS.md#recall).
 */
export const FACTS_KIND = "facts";

/** A random id for one store instance: its own rows are delivered locally, not again from the log. */
export function newOrigin(): string {
  return crypto.randomUUID();
}

// `data` of an append that inserted nothing (an id already stored); null for every inserting one.
const NOT_INSERTED = '{"inserted":false}';

/** The JSON columns of a change. */
export function changeColumns(change: LoggedChange): { ids: string; data: string | null } {
  const data = change.compaction
    ? JSON.stringify(change.sealed === true ? { ...change.compaction, sealed: true } : change.compaction)
    : change.inserted === false
      ? NOT_INSERTED
      : null;
  return { ids: JSON.stringify(change.ids), data };
}

/** Opens the sealed summary of overlay `overlayId` of a session (the store's keys; `DECRYPT_FAILED` without them). */
export type OpenSummary = (sessionId: string, overlayId: string, sealed: string) => string | Promise<string>;

/**
 * The event a logged row stands for; messages are read back by id (null when the row's message is gone since:
 * a later row says why), and a sealed overlay summary is opened with `open`.
 */
export async function rowEvent(
  row: ChangeRow,
  origin: "local" | "remote",
  read: (sessionId: string, id: string) => Promise<SessionMessage | null>,
  open?: OpenSummary,
): Promise<ChangeEvent | null> {
  const base = { sessionId: row.session_id, cursor: Number(row.seq), origin };
  const ids = JSON.parse(row.ids) as string[];
  switch (row.kind) {
    case "append":
    case "import":
    case "update": {
      const id = ids[0];
      const message = id === undefined ? null : await read(row.session_id, id);
      if (!message) return null;
      if (row.kind === "update") return { type: "update", message, ...base };
      if (row.kind === "import") return { type: "import", message, inserted: true, ...base };
      const inserted = row.data !== NOT_INSERTED;
      return { type: "append", message, parentId: row.parent_id, inserted, ...base };
    }
    case "delete":
      return { type: "delete", ids, ...base };
    case "clear":
      return { type: "clear", ...base };
    case "erased":
      return { type: "erased", ...base };
    case FACTS_KIND:
      return null;
    case "compaction": {
      const { sealed, ...compaction } = JSON.parse(row.data ?? "null") as StoredCompaction & {
        sealed?: unknown;
      };
      if (sealed === true) {
        if (!open) {
          throw new SessionError(
            "DECRYPT_FAILED",
            "An encrypted overlay summary was read without the store's keys",
          );
        }
        compaction.summary = await open(row.session_id, compaction.id, compaction.summary);
      }
      return { type: "compaction", compaction, ...base };
    }
    default:
      return { type: "reset", reason: `session "${row.session_id}" was rewritten (${row.kind})`, ...base };
  }
}

/** A store's `changeLog` option: `true`, or how many changes to keep and how often to poll. */
const changeLogSchema = z.object(
  {
    retain: numberWhere(
      "changeLog.retain must be a whole number >= 1",
      (n) => Number.isSafeInteger(n) && n >= 1,
    ).optional(),
    pollMs: numberWhere(
      "changeLog.pollMs must be a finite number >= 10",
      (n) => Number.isFinite(n) && n >= 10,
    ).optional(),
  },
  rule("changeLog must be true or an object { retain, pollMs }"),
);

/** Validates change-log options (`INVALID_ARGUMENT` at `changeLog.retain` or `changeLog.pollMs`). */
export function logSettings(
  options: boolean | ChangeLogOptions | undefined,
): Required<ChangeLogOptions> | null {
  if (!options) return null;
  const given = parseInput(changeLogSchema, options === true ? {} : options, { path: "changeLog" });
  return { retain: given.retain ?? DEFAULT_RETAIN, pollMs: given.pollMs ?? 200 };
}

/**
 * The `reset` a replay starts with when pruning already removed events after `after` (the log is only ever cut at
 * its old end, so a gap there means lost events), or undefined when the log still holds them all.
 */
export function prunedPastCursor(oldest: number | null | undefined, after: number): ChangeEvent | undefined {
  if (typeof oldest !== "number" || oldest <= after + 1) return undefined;
  return {
    type: "reset",
    reason: "the change log no longer holds events after this cursor",
    sessionId: "",
    wholeStore: true,
    cursor: after,
    origin: "local",
  };
}

/** What a write logs about itself (its session is the provider's). */
export type Change = Omit<LoggedChange, "sessionId">;

/** The change of an append or import: logged only when it inserted (a duplicate is recorded by the feed). */
export const inserted =
  (type: "append" | "import", id: string, parentId: string | null | undefined) =>
  (result: { inserted: boolean }): Change | null =>
    result.inserted ? { type, ids: [id], parentId } : null;

/** The change of an update or upsert: an insert is an append, a replacement an update, nothing else is logged. */
export const replaced =
  (id: string, parentId?: string | null) =>
  (result: { inserted?: boolean; updated: boolean }): Change | null =>
    result.inserted
      ? { type: "append", ids: [id], parentId }
      : result.updated
        ? { type: "update", ids: [id] }
        : null;
