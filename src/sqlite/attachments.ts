import { type Attachment, hydrateSync, offloadMessage } from "../store/attachments.js";
import type { AttachmentImport } from "../store/transfer-attachments.js";
import type { AttachmentStats, AttachmentStore } from "../store/types.js";
import type { SessionMessage } from "../types.js";
import type { SqlDriver } from "./driver.js";

/**
 * SQLite storage of offloaded payloads (migration 6): `agent_attachments` holds each payload once under its
 * SHA-256, split into chunks of at most the driver's `maxValueBytes` (a Durable Object caps a value at 2 MB);
 * `agent_attachment_links` says which message row points at which payload. A payload's reference count is the
 * number of its link rows — counted, never stored, so it cannot drift — and every function here runs inside the
 * caller's write transaction, so a payload is deleted exactly when its last link goes.
 */

function asBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  return Buffer.alloc(0);
}

/** Stores the payloads that are new (chunked) and links them to the row `seq`. */
export function linkAttachments(driver: SqlDriver, seq: number, attachments: readonly Attachment[]): void {
  const chunk = Number.isFinite(driver.maxValueBytes)
    ? Math.max(1, driver.maxValueBytes)
    : Number.POSITIVE_INFINITY;
  for (const { hash, bytes } of attachments) {
    const stored = driver.get("SELECT 1 AS found FROM agent_attachments WHERE hash = ? AND chunk = 0", [
      hash,
    ]);
    if (!stored) {
      const count = Math.max(1, Math.ceil(bytes.length / chunk));
      for (let i = 0; i < count; i++) {
        const piece =
          count === 1 ? bytes : bytes.subarray(i * chunk, Math.min(bytes.length, (i + 1) * chunk));
        driver.run("INSERT INTO agent_attachments (hash, chunk, data) VALUES (?, ?, ?)", [hash, i, piece]);
      }
    }
    link(driver, seq, hash);
  }
}

function link(driver: SqlDriver, seq: number, hash: string): void {
  driver.run(
    "INSERT INTO agent_attachment_links (message_seq, hash) VALUES (?, ?) ON CONFLICT (message_seq, hash) DO NOTHING",
    [seq, hash],
  );
}

/**
 * What an imported row needs linked: the payloads its stored JSON points at. Checked before the row is written
 * (a `sql` tag without `transactionSync` cannot roll back): the ones that came with the stream are stored when
 * new, the others must be stored already (`INVALID_ARGUMENT` otherwise).
 */
export function planImportLinks(
  driver: SqlDriver,
  messageId: string,
  content: string,
  incoming: AttachmentImport,
): (seq: number) => void {
  const { hashes, provided } = incoming.needs(content);
  if (hashes.length === 0) return () => {};
  const stored = attachmentsStored(driver, hashes);
  incoming.assertComplete(messageId, hashes, (hash) => stored.has(hash));
  return (seq) => {
    linkAttachments(driver, seq, provided);
    for (const hash of hashes) link(driver, seq, hash);
  };
}

/** The hashes among `hashes` that name a stored payload. */
function attachmentsStored(driver: SqlDriver, hashes: readonly string[]): Set<string> {
  if (hashes.length === 0) return new Set();
  const rows = driver.all<{ hash: string }>(
    "SELECT hash FROM agent_attachments WHERE chunk = 0 AND hash IN (SELECT value FROM json_each(?))",
    [JSON.stringify(hashes)],
  );
  return new Set(rows.map((row) => row.hash));
}

/** Deletes the payloads among `hashes` that no row links to any more. */
function collect(driver: SqlDriver, hashes: readonly string[]): void {
  if (hashes.length === 0) return;
  driver.run(
    `DELETE FROM agent_attachments WHERE hash IN (SELECT value FROM json_each(?))
       AND NOT EXISTS (SELECT 1 FROM agent_attachment_links l WHERE l.hash = agent_attachments.hash)`,
    [JSON.stringify([...new Set(hashes)])],
  );
}

/** Drops the links of rows about to be deleted or rewritten, and the payloads left without a link. */
function release(driver: SqlDriver, sql: string, params: (string | number)[]): void {
  const rows = driver.all<{ hash: string }>(sql, params);
  collect(
    driver,
    rows.map((row) => row.hash),
  );
}

/** Releases the payloads of messages of one session, by id (before they are deleted). */
export function releaseMessages(driver: SqlDriver, sessionNum: number, ids: readonly string[]): void {
  release(
    driver,
    `DELETE FROM agent_attachment_links WHERE message_seq IN (
       SELECT seq FROM agent_messages WHERE session_num = ? AND id IN (SELECT value FROM json_each(?))
     ) RETURNING hash`,
    [sessionNum, JSON.stringify(ids)],
  );
}

/** Releases the payloads of every message of a session (before the session's rows are deleted). */
export function releaseSession(driver: SqlDriver, sessionNum: number): void {
  release(
    driver,
    `DELETE FROM agent_attachment_links WHERE message_seq IN (SELECT seq FROM agent_messages WHERE session_num = ?)
     RETURNING hash`,
    [sessionNum],
  );
}

/** The stored bytes of these hashes, chunks joined in order: one statement for a whole read. */
export function loadAttachments(driver: SqlDriver, hashes: readonly string[]): Map<string, Uint8Array> {
  const chunks = new Map<string, Buffer[]>();
  const rows = driver.all<{ hash: string; data: unknown }>(
    "SELECT hash, data FROM agent_attachments WHERE hash IN (SELECT value FROM json_each(?)) ORDER BY hash, chunk",
    [JSON.stringify(hashes)],
  );
  for (const row of rows) {
    const list = chunks.get(row.hash);
    if (list) list.push(asBuffer(row.data));
    else chunks.set(row.hash, [asBuffer(row.data)]);
  }
  const found = new Map<string, Uint8Array>();
  for (const [hash, list] of chunks) found.set(hash, list.length === 1 ? list[0]! : Buffer.concat(list));
  return found;
}

/** Restores the payloads of messages read from this database (one lookup for all of them). */
export function hydrate<T extends SessionMessage | null>(driver: SqlDriver, messages: T[]): T[] {
  return hydrateSync(messages, (hashes) => loadAttachments(driver, hashes));
}

/** The row's `seq` of a message just written, for its links. */
function seqOf(driver: SqlDriver, sessionId: string, id: string): number | undefined {
  return driver.get<{ seq: number }>(
    `SELECT m.seq FROM agent_messages m JOIN agent_session_heads h ON h.num = m.session_num
     WHERE h.session_id = ? AND m.id = ?`,
    [sessionId, id],
  )?.seq;
}

/**
 * Runs a write of `message` (`write` gets the JSON to store, pointers in place of payloads) and links the
 * message's payloads in the same transaction. `replaces` is true for an update: the row's old links are
 * released after the new ones are made, so a payload the update keeps is never deleted in between.
 */
export function writeWithAttachments<T>(
  driver: SqlDriver,
  sessionId: string,
  message: SessionMessage,
  json: string,
  replaces: boolean,
  write: (content: string) => T,
): T {
  const stored = offloadMessage(message, json);
  if (stored.attachments.length === 0 && !replaces) return write(stored.content);
  return driver.transaction(() => {
    const before = replaces ? seqOf(driver, sessionId, message.id) : undefined;
    const old =
      before === undefined
        ? []
        : driver.all<{ hash: string }>(
            "DELETE FROM agent_attachment_links WHERE message_seq = ? RETURNING hash",
            [before],
          );
    const result = write(stored.content);
    const seq = stored.attachments.length > 0 ? seqOf(driver, sessionId, message.id) : undefined;
    if (seq !== undefined) linkAttachments(driver, seq, stored.attachments);
    collect(
      driver,
      old.map((row) => row.hash),
    );
    return result;
  });
}

/** The {@link AttachmentStore} of a SQLite store. */
export class SqliteAttachments implements AttachmentStore {
  constructor(private readonly driver: () => SqlDriver) {}

  async stats(): Promise<AttachmentStats> {
    const row = this.driver().get<{ count: number; bytes: number | null }>(
      "SELECT COUNT(DISTINCT hash) AS count, SUM(length(data)) AS bytes FROM agent_attachments",
    );
    return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  async get(hash: string): Promise<Uint8Array | null> {
    if (typeof hash !== "string") return null;
    return loadAttachments(this.driver(), [hash]).get(hash) ?? null;
  }
}
