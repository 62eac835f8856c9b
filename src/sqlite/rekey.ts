/**
 * Key rotation on SQLite (docs/PRIVACY.md, "Key rotation"): re-seals an owner's messages under the keyring's
 * current key in bounded batches, one write transaction each, walking the owner's sessions by head number and
 * their messages by id (the unique index), with the cursor recorded in the same transaction. A crash or an abort
 * leaves every row under the old key or the new one, both readable, and the next run resumes at the cursor. The
 * rotation ends only when no row of the owner is sealed under another key; its blocks and entries are re-sealed
 * in the transaction that ends it (rekey-context.ts).
 */
import { SessionError } from "../errors.js";
import { parseMessage } from "../message/json.js";
import { parseRekeyOptions, type RekeyOptions, type RekeyReport } from "../store/crypto/rekey-options.js";
import { type RekeyBatch, requireKeyring, runRekey } from "../store/crypto/rekey-run.js";
import { startRotation } from "../store/crypto/rotation.js";
import { isSealed, keyId, sealedStart } from "../store/crypto/seal.js";
import { parseOwner } from "../store/owner.js";
import { contentSql, deleteChunks, storedContent, storedText, writeChunks } from "./chunks.js";
import type { SqlDriver } from "./connection/driver.js";
import { resealContext } from "./rekey-context.js";
import { finishRotation, moveCursor, readRotation } from "./rekey-state.js";
import { resealSummaries } from "./rekey-summaries.js";
import { storedForm } from "./sealing.js";
import { afterInsert, indexedSeq, unindexMessage } from "./search/indexing.js";

const OWNED = `FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
  JOIN agent_messages m ON m.session_num = h.num WHERE s.owner = ?`;

interface Row {
  seq: number;
  id: string;
  chunks: number;
  content: unknown;
}

/** Re-seals `owner`'s messages under the keyring's current key; see {@link RekeyOptions} and docs/PRIVACY.md. */
export async function rekeySqlite(
  driver: SqlDriver,
  owner: unknown,
  options: RekeyOptions = {},
): Promise<RekeyReport> {
  const checked = parseOwner(owner);
  const { batchSize, signal, onProgress } = parseRekeyOptions(options);
  const keys = requireKeyring(driver.keys);
  signal?.throwIfAborted();
  const start = driver.transaction(() => startRotation(keys, checked));
  const id = keyId(start.key);
  const hash = start.ownerHash;
  return runRekey(
    { owner: checked, keyId: id, resumed: start.resumed },
    {
      total: () => driver.get<{ n: number }>(`SELECT count(*) AS n ${OWNED}`, [checked])?.n ?? 0,
      examinedBefore: () => examinedBefore(driver, checked, hash),
      batch: (size) => driver.transaction(() => resealBatch(driver, checked, hash, id, size)),
      finish: () => driver.transaction(() => finish(driver, checked, hash, id)),
    },
    { batchSize, signal, onProgress },
  );
}

/** One batch, inside its transaction: up to `size` rows after the cursor re-sealed, the cursor moved past them. */
function resealBatch(
  driver: SqlDriver,
  owner: string,
  ownerHash: string,
  id: string,
  size: number,
): RekeyBatch {
  const at = readRotation(driver, ownerHash);
  // Another run finished the rotation meanwhile (or the owner was erased): the final check decides.
  if (!at) return { examined: 0, resealed: 0, end: true };
  let session = at.session_num === 0 ? null : sessionAt(driver, at.session_num);
  let after = at.message_id;
  if (session === null) {
    session = nextSession(driver, owner, at.session_num);
    after = null;
  }
  const batch: RekeyBatch = { examined: 0, resealed: 0, end: false };
  while (session !== null && batch.examined < size) {
    const rows = rowsAfter(driver, session.num, after, size - batch.examined);
    for (const row of rows) {
      batch.examined++;
      after = row.id;
      if (reseal(driver, session, row, id)) batch.resealed++;
    }
    if (batch.examined < size) {
      session = nextSession(driver, owner, session.num);
      after = null;
    }
  }
  batch.end = session === null;
  moveCursor(driver, ownerHash, session?.num ?? Number.MAX_SAFE_INTEGER, after);
  return batch;
}

interface OwnedSession {
  num: number;
  session_id: string;
}

function sessionAt(driver: SqlDriver, num: number): OwnedSession | null {
  return (
    driver.get<OwnedSession>("SELECT num, session_id FROM agent_session_heads WHERE num = ?", [num]) ?? null
  );
}

function nextSession(driver: SqlDriver, owner: string, afterNum: number): OwnedSession | null {
  return (
    driver.get<OwnedSession>(
      `SELECT h.num, h.session_id FROM agent_sessions s JOIN agent_session_heads h ON h.session_id = s.id
       WHERE s.owner = ? AND h.num > ? ORDER BY h.num LIMIT 1`,
      [owner, afterNum],
    ) ?? null
  );
}

function rowsAfter(driver: SqlDriver, num: number, after: string | null, limit: number): Row[] {
  const select = `SELECT seq, id, chunks, ${contentSql()} AS content FROM agent_messages WHERE session_num = ?`;
  return after === null
    ? driver.all<Row>(`${select} ORDER BY id LIMIT ?`, [num, limit])
    : driver.all<Row>(`${select} AND id > ? ORDER BY id LIMIT ?`, [num, after, limit]);
}

/**
 * Re-seals one row under the current key unless it is in clear or under that key already; true when it did. The
 * row's content hash follows the key, and the row goes through the search index's path for a rewritten row.
 */
function reseal(driver: SqlDriver, session: OwnedSession, row: Row, id: string): boolean {
  const text = storedText(driver, row.content);
  if (!isSealed(text) || text.startsWith(sealedStart(id))) return false;
  const keys = driver.keys!;
  const json = keys.open(session.session_id, text, row.id);
  const form = storedForm(driver, session.session_id, row.id, json);
  if (!form.sealed || !form.content.startsWith(sealedStart(id))) {
    throw new SessionError(
      "CONFLICT",
      `The keyring's key for session "${session.session_id}" changed during a rotation`,
    );
  }
  const stored = storedContent(driver, form.content);
  if (row.chunks > 0) deleteChunks(driver, row.seq);
  driver.run("UPDATE agent_messages SET content = ?, chunks = ?, content_hash = ? WHERE seq = ?", [
    stored.content,
    stored.chunks,
    form.hash,
    row.seq,
  ]);
  writeChunks(driver, row.seq, stored);
  // What the index holds for the row was made under the old key (a blind index's terms are keyed): it is indexed
  // again as a written row is (today a sealed row is not indexed at all, so nothing changes).
  const message = parseMessage(json);
  unindexMessage(driver, row.seq);
  if (message) {
    const sealed = { key: form.key!, content: form.content };
    afterInsert(driver, row.seq, session.num, message, indexedSeq(driver), sealed);
  }
  return true;
}

/** The rows an earlier run walked already (for progress): sessions before the cursor's and ids up to it. */
function examinedBefore(driver: SqlDriver, owner: string, ownerHash: string): number {
  const at = readRotation(driver, ownerHash);
  if (!at) return 0;
  return (
    driver.get<{ n: number }>(
      `SELECT count(*) AS n ${OWNED} AND (h.num < ? OR (h.num = ? AND ? IS NOT NULL AND m.id <= ?))`,
      [owner, at.session_num, at.session_num, at.message_id, at.message_id],
    )?.n ?? 0
  );
}

/**
 * After a full walk, in one transaction: re-seals the owner's overlay summaries (rekey-summaries.ts), then ends
 * the rotation when no row of the owner is sealed under another key (each row's first bytes name its key), else
 * sends the cursor back to the start for another round.
 */
function finish(driver: SqlDriver, owner: string, ownerHash: string, id: string): boolean {
  resealSummaries(driver, owner, id);
  const start = sealedStart(id);
  const first = `CASE WHEN m.chunks = 0 THEN substr(m.content, 1, ?)
    ELSE (SELECT substr(c.data, 1, ?) FROM agent_message_chunks c WHERE c.seq = m.seq AND c.idx = 0) END`;
  const left = driver.get<{ n: number }>(
    `SELECT count(*) AS n ${OWNED} AND ${first} GLOB '~sealed*' AND ${first} <> ?`,
    [owner, start.length, start.length, start.length, start.length, start],
  )?.n;
  if (left === 0) {
    // The owner's blocks and entries follow in the same transaction (rekey-context.ts).
    resealContext(driver, owner);
    finishRotation(driver, ownerHash);
    return true;
  }
  if (!readRotation(driver, ownerHash)) {
    driver.run(
      "INSERT INTO agent_owner_rekeys (owner_hash, from_check) SELECT owner_hash, key_check FROM agent_owner_keys WHERE owner_hash = ?",
      [ownerHash],
    );
  }
  moveCursor(driver, ownerHash, 0, null);
  return false;
}
