import type { AttachmentStats, AttachmentStore } from "../../contract/attachments.js";
import type { SessionMessage } from "../../contract/message.js";
import { hydrateSync } from "../../store/media/offload.js";
import type { AttachmentImport } from "../../store/transfer/attachments.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import {
  collect,
  linkAttachments,
  linkStored,
  loadAttachments,
  STORE_TABLES,
  unlinkRows,
} from "./sqlite-tables.js";

/**
 * Offloaded payloads of a SQLite store's messages (tables: tables.ts, migration 6): a message row's
 * links are keyed by its `seq`, made in the write's transaction and released before its row goes.
 */

/** Releases the payloads of messages of one session, by id (before they are deleted). */
export function releaseMessages(driver: SqlDriver, sessionNum: number, ids: readonly string[]): void {
  const rows =
    "SELECT seq FROM agent_messages WHERE session_num = ? AND id IN (SELECT value FROM json_each(?))";
  collect(driver, unlinkRows(driver, rows, [sessionNum, JSON.stringify(ids)]));
}

/** Releases the payloads of every message of a session (before the session's rows are deleted). */
export function releaseSession(driver: SqlDriver, sessionNum: number): void {
  collect(driver, unlinkRows(driver, "SELECT seq FROM agent_messages WHERE session_num = ?", [sessionNum]));
}

/** Restores the payloads of messages read from this database (one lookup for all of them). */
export function hydrate<T extends SessionMessage | null>(driver: SqlDriver, messages: T[]): T[] {
  return hydrateSync(messages, (hashes) => loadAttachments(driver, hashes));
}

/**
 * What an imported row needs linked: the payloads its stored JSON points at. Checked before the row is written
 * (a `sql` tag without `transactionSync` cannot roll back): the ones that came with the stream are stored when
 * new, the others must be stored already (`INVALID_ARGUMENT` otherwise).
 */
export function planImportLinks(
  driver: SqlDriver,
  num: number,
  messageId: string,
  content: string,
  incoming: AttachmentImport,
): (seq: number) => void {
  const { hashes, provided } = incoming.needs(content);
  if (hashes.length === 0) return () => {};
  const unsent = incoming.unsent(hashes);
  // Only payloads this session's rows link already (see AttachmentImport.assertComplete).
  const linked =
    unsent.length === 0
      ? []
      : driver
          .all<{ hash: string }>(
            `SELECT DISTINCT l.hash FROM ${STORE_TABLES.links} l JOIN agent_messages m ON m.seq = l.message_seq
             WHERE m.session_num = ? AND l.hash IN (SELECT value FROM json_each(?))`,
            [num, JSON.stringify(unsent)],
          )
          .map((row) => row.hash);
  incoming.assertComplete(messageId, content, loadAttachments(driver, linked));
  return (seq) => {
    linkAttachments(driver, seq, provided);
    linkStored(driver, seq, hashes);
  };
}

/** The {@link AttachmentStore} of a SQLite store. */
export class SqliteAttachments implements AttachmentStore {
  constructor(private readonly driver: () => SqlDriver) {}

  async stats(): Promise<AttachmentStats> {
    const row = this.driver().get<{ count: number; bytes: number | null }>(
      `SELECT COUNT(DISTINCT hash) AS count, SUM(length(data)) AS bytes FROM ${STORE_TABLES.attachments}`,
    );
    return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  async get(hash: string): Promise<Uint8Array | null> {
    if (typeof hash !== "string") return null;
    return loadAttachments(this.driver(), [hash]).get(hash) ?? null;
  }
}
