import { concatBytes } from "../../runtime/bytes.js";
import type { Attachment } from "../../store/media/offload.js";
import { pieceBytes } from "../engines/sqlite/chunks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/**
 * The two tables of a SQLite attachment store: payloads, each stored once under its SHA-256 and split into chunks
 * that leave their row under the driver's `maxValueBytes` (a Durable Object caps a value at 2 MB), and one link row per (row,
 * payload). A payload's reference count is the number of its link rows — counted, never stored, so it cannot
 * drift — and every function here runs inside the caller's write transaction, so a payload is deleted exactly
 * when its last link goes. A store uses `agent_attachments` (STORE_TABLES).
 */
export interface AttachmentTables {
  attachments: string;
  links: string;
}

/** The tables of a `SqliteStore` (migration 6). */
export const STORE_TABLES: AttachmentTables = {
  attachments: "agent_attachments",
  links: "agent_attachment_links",
};

/** The statements that create a pair of attachment tables. */
export function attachmentTableStatements(names: AttachmentTables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${names.attachments} (
      hash TEXT NOT NULL,
      chunk INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (hash, chunk)
    )`,
    `CREATE TABLE IF NOT EXISTS ${names.links} (
      message_seq INTEGER NOT NULL,
      hash TEXT NOT NULL,
      PRIMARY KEY (message_seq, hash)
    ) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS ${names.links}_hash ON ${names.links}(hash)`,
  ];
}

function asBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return new Uint8Array(0);
}

/** Links the row `seq` to payloads that are stored already. */
export function linkStored(
  driver: SqlDriver,
  seq: number,
  hashes: readonly string[],
  names = STORE_TABLES,
): void {
  for (const hash of hashes) {
    driver.run(
      `INSERT INTO ${names.links} (message_seq, hash) VALUES (?, ?) ON CONFLICT (message_seq, hash) DO NOTHING`,
      [seq, hash],
    );
  }
}

/** Stores the payloads that are new (chunked) and links them to the row `seq`. */
export function linkAttachments(
  driver: SqlDriver,
  seq: number,
  attachments: readonly Attachment[],
  names = STORE_TABLES,
): void {
  // The limit caps the whole row (SQLite's length limit covers the record), so a piece leaves room for the hash.
  const chunk = pieceBytes(driver);
  for (const { hash, bytes } of attachments) {
    if (!driver.get(`SELECT 1 AS found FROM ${names.attachments} WHERE hash = ? AND chunk = 0`, [hash])) {
      const count = Math.max(1, Math.ceil(bytes.length / chunk));
      for (let i = 0; i < count; i++) {
        const piece =
          count === 1 ? bytes : bytes.subarray(i * chunk, Math.min(bytes.length, (i + 1) * chunk));
        driver.run(`INSERT INTO ${names.attachments} (hash, chunk, data) VALUES (?, ?, ?)`, [hash, i, piece]);
      }
    }
  }
  linkStored(
    driver,
    seq,
    attachments.map((a) => a.hash),
    names,
  );
}

/** Deletes the payloads among `hashes` that no row links to any more. */
export function collect(driver: SqlDriver, hashes: readonly string[], names = STORE_TABLES): void {
  if (hashes.length === 0) return;
  driver.run(
    `DELETE FROM ${names.attachments} WHERE hash IN (SELECT value FROM json_each(?))
       AND NOT EXISTS (SELECT 1 FROM ${names.links} l WHERE l.hash = ${names.attachments}.hash)`,
    [JSON.stringify([...new Set(hashes)])],
  );
}

/**
 * Drops the links of the rows `rowsSql` selects (its parameters `params`) and returns the payloads they named;
 * pass those to {@link collect} once the rows' replacements, if any, are linked.
 */
export function unlinkRows(
  driver: SqlDriver,
  rowsSql: string,
  params: (string | number)[],
  names = STORE_TABLES,
): string[] {
  return driver
    .all<{ hash: string }>(
      `DELETE FROM ${names.links} WHERE message_seq IN (${rowsSql}) RETURNING hash`,
      params,
    )
    .map((row) => row.hash);
}

/** The stored bytes of these hashes, chunks joined in order: one statement for a whole read. */
export function loadAttachments(
  driver: SqlDriver,
  hashes: readonly string[],
  names = STORE_TABLES,
): Map<string, Uint8Array> {
  const chunks = new Map<string, Uint8Array[]>();
  const rows = driver.all<{ hash: string; data: unknown }>(
    `SELECT hash, data FROM ${names.attachments} WHERE hash IN (SELECT value FROM json_each(?)) ORDER BY hash, chunk`,
    [JSON.stringify(hashes)],
  );
  for (const row of rows) {
    const list = chunks.get(row.hash);
    if (list) list.push(asBytes(row.data));
    else chunks.set(row.hash, [asBytes(row.data)]);
  }
  const found = new Map<string, Uint8Array>();
  for (const [hash, list] of chunks) found.set(hash, concatBytes(list));
  return found;
}
