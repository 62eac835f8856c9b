/**
 * Key rotation on Postgres (docs/PRIVACY.md, "Key rotation"): re-seals an owner's messages under the keyring's
 * current key in bounded batches, one transaction each, walking the owner's sessions by head number and their
 * messages by id (the unique index), with the cursor recorded in the same transaction. Each re-sealed row's search
 * vector is made again from the opened text as blind tokens of the new key (stored-form.ts), in the same UPDATE,
 * so the owner's messages are still found once the old key is gone. A crash or an abort leaves every row under
 * the old key or the new one, both readable and searchable, and the next run resumes at the cursor. The rotation
 * ends only when SQL finds no row of the owner sealed under another key; its overlay summaries, blocks and entries
 * are re-sealed in the transaction that ends it (rekey-summaries.ts, rekey-context.ts).
 */
import { SessionError } from "../errors.js";
import { storedMessageText } from "../message/text.js";
import { blindTokensOf } from "../search/blind-tokens.js";
import { checkOf } from "../store/crypto/owner-keys.js";
import { parseRekeyOptions, type RekeyOptions, type RekeyReport } from "../store/crypto/rekey-options.js";
import { type RekeyBatch, requireKeyring, runRekey } from "../store/crypto/rekey-run.js";
import { startRotation } from "../store/crypto/rotation.js";
import { isSealed, keyId, sealContent, sealedHash, sealedStart } from "../store/crypto/seal.js";
import { parseOwner } from "../store/owner.js";
import type { PostgresBackend } from "./backend.js";
import { onSession, sessionParam } from "./citus/route.js";
import type { Query } from "./connection/client.js";
import { resealContext } from "./rekey-context.js";
import { moveCursor, readRotation } from "./rekey-state.js";
import { resealSummaries } from "./rekey-summaries.js";
import type { Rotation } from "./rotation.js";
import type { Tables } from "./schema.js";
import { ownerLexeme, sessionLexeme, toTsvector } from "./search/fts.js";

/** The owner's messages: its sessions, their heads and their rows (co-located by session on Citus). */
function owned(t: Tables): string {
  return `FROM ${t.sessions} s JOIN ${t.heads} h ON h.session_id = s.id
    JOIN ${t.messages} m ON m.session_num = h.num${onSession(t, "m", "h.session_id")} WHERE s.owner = $1`;
}

/** Re-seals `owner`'s messages under the keyring's current key; see {@link RekeyOptions} and docs/PRIVACY.md. */
export async function rekeyPostgres(
  backend: PostgresBackend,
  owner: unknown,
  options: RekeyOptions = {},
): Promise<RekeyReport> {
  const checked = parseOwner(owner);
  const { batchSize, signal, onProgress } = parseRekeyOptions(options);
  const t = backend.tables;
  const keys = requireKeyring(t.keys);
  signal?.throwIfAborted();
  const executor = await backend.ready();
  // Every check read again: this process's cached ones may predate another process's rotation.
  const { value: start } = await keys.guarded(executor.query, (k) => startRotation(k, checked), true);
  const id = keyId(start.key);
  const at: Rotation = {
    t,
    owner: checked,
    ownerHash: start.ownerHash,
    key: start.key,
    id,
    blind: blindTokensOf(start.key),
  };
  return runRekey(
    { owner: checked, keyId: id, resumed: start.resumed },
    {
      total: async () => {
        const [row] = await executor.query<{ n: string }>(`SELECT count(*) AS n ${owned(t)}`, [checked]);
        return Number(row?.n ?? 0);
      },
      examinedBefore: () => examinedBefore(executor.query, at),
      batch: (size) => executor.transaction((query) => resealBatch(query, at, size)),
      finish: () => executor.transaction((query) => finish(query, at)),
    },
    { batchSize, signal, onProgress },
  );
}

interface OwnedSession {
  num: string;
  session_id: string;
}

interface Row {
  seq: string;
  id: string;
  content: string;
  content_hash: string | null;
}

/** One batch, inside its transaction: up to `size` rows after the cursor re-sealed, the cursor moved past them. */
async function resealBatch(query: Query, at: Rotation, size: number): Promise<RekeyBatch> {
  const { t } = at;
  // The rotation's row locked: two runs of the same rotation take turns, batch by batch.
  const cursor = await readRotation(query, t, at.ownerHash, true);
  // Another run finished the rotation meanwhile (or the owner was erased): the final check decides.
  if (!cursor) return { examined: 0, resealed: 0, end: true };
  await requireKey(query, at);
  let session = cursor.session_num === "0" ? null : await sessionAt(query, t, cursor.session_num);
  let after = cursor.message_id;
  if (session === null) {
    session = await nextSession(query, at, cursor.session_num);
    after = null;
  }
  const batch: RekeyBatch = { examined: 0, resealed: 0, end: false };
  while (session !== null && batch.examined < size) {
    const rows = await rowsAfter(query, t, session, after, size - batch.examined);
    batch.examined += rows.length;
    batch.resealed += await reseal(query, at, session, rows);
    after = rows.at(-1)?.id ?? after;
    if (batch.examined < size) {
      session = await nextSession(query, at, session.num);
      after = null;
    }
  }
  batch.end = session === null;
  await moveCursor(query, t, at.ownerHash, session?.num ?? Number.MAX_SAFE_INTEGER.toString(), after);
  return batch;
}

/** `CONFLICT` unless the owner's recorded key is still the one this rotation seals under (read under its lock). */
async function requireKey(query: Query, at: Rotation): Promise<void> {
  const [row] = await query<{ key_check: string }>(
    `SELECT key_check FROM ${at.t.ownerKeys} WHERE owner_hash = $1 FOR SHARE`,
    [at.ownerHash],
  );
  if (row?.key_check !== checkOf(at.key)) {
    throw new SessionError("CONFLICT", `The key of owner "${at.owner}" changed during its rotation`);
  }
}

async function sessionAt(query: Query, t: Tables, num: string): Promise<OwnedSession | null> {
  const [row] = await query<OwnedSession>(
    `SELECT num::text AS num, session_id FROM ${t.heads} WHERE num = $1::bigint`,
    [num],
  );
  return row ?? null;
}

async function nextSession(query: Query, at: Rotation, afterNum: string): Promise<OwnedSession | null> {
  const [row] = await query<OwnedSession>(
    `SELECT h.num::text AS num, h.session_id FROM ${at.t.sessions} s JOIN ${at.t.heads} h ON h.session_id = s.id
     WHERE s.owner = $1 AND h.num > $2::bigint ORDER BY h.num LIMIT 1`,
    [at.owner, afterNum],
  );
  return row ?? null;
}

async function rowsAfter(
  query: Query,
  t: Tables,
  session: OwnedSession,
  after: string | null,
  limit: number,
): Promise<Row[]> {
  return query<Row>(
    `SELECT seq::text AS seq, id, content, content_hash FROM ${t.messages}
     WHERE session_num = $1::bigint AND ($2::text IS NULL OR id > $2::text)${onSession(t, null, "$4::text")}
     ORDER BY id LIMIT $3`,
    [session.num, after, limit, ...sessionParam(t, session.session_id)],
  );
}

/**
 * Re-seals the rows not under the new key already, in one statement; answers how many it wrote. Each row's search
 * vector follows the key: the opened text's blind tokens under the new key, with the session's and the owner's
 * lexemes, as an append writes it. A row written meanwhile (its hash changed) keeps the writer's content and
 * vector, sealed under the recorded (new) key by its guard.
 */
async function reseal(query: Query, at: Rotation, session: OwnedSession, rows: Row[]): Promise<number> {
  const { t, key } = at;
  const start = sealedStart(at.id);
  const stale = rows.filter((r) => isSealed(r.content) && !r.content.startsWith(start));
  if (stale.length === 0) return 0;
  const opened = await t.keys!.run(query, (k) =>
    stale.map((r) => k.open(session.session_id, r.content, r.id)),
  );
  const contents = stale.map((r, i) => sealContent(key, session.session_id, r.id, opened[i]!));
  const hashes = opened.map((json) => sealedHash(key, json));
  const scope = sessionLexeme(session.session_id);
  const searches = opened.map((json) => toTsvector(storedMessageText(json), scope, at.blind));
  // The owner lexeme is a constant of the rotation (a parameter, not a look-up: Citus refuses a STABLE function
  // over a column in an UPDATE); a row without searchable text keeps no vector (NULL || lexeme is NULL).
  const written = await query(
    `UPDATE ${t.messages} m SET content = u.content, content_hash = u.hash,
       search = u.search::tsvector || array_to_tsvector(ARRAY[$6::text])
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(seq, content, hash, old, search)
     WHERE m.seq = u.seq AND m.content_hash IS NOT DISTINCT FROM u.old AND m.session_num = $7::bigint${onSession(t, "m", "$8::text")}
     RETURNING m.seq`,
    [
      stale.map((r) => r.seq),
      contents,
      hashes,
      stale.map((r) => r.content_hash),
      searches,
      ownerLexeme(at.owner),
      session.num,
      ...sessionParam(t, session.session_id),
    ],
  );
  return written.length;
}

/** The rows an earlier run walked already (for progress): sessions before the cursor's and ids up to it. */
async function examinedBefore(query: Query, at: Rotation): Promise<number> {
  const cursor = await readRotation(query, at.t, at.ownerHash);
  if (!cursor) return 0;
  const [row] = await query<{ n: string }>(
    `SELECT count(*) AS n ${owned(at.t)}
       AND (h.num < $2::bigint OR (h.num = $2::bigint AND $3::text IS NOT NULL AND m.id <= $3::text))`,
    [at.owner, cursor.session_num, cursor.message_id],
  );
  return Number(row?.n ?? 0);
}

/**
 * After a full walk, in one transaction: re-seals the owner's overlay summaries (rekey-summaries.ts), then ends
 * the rotation when no message of the owner is sealed under another key (each row's first bytes name its key),
 * re-sealing its blocks and entries (rekey-context.ts), else sends the cursor back to the start for another round.
 */
async function finish(query: Query, at: Rotation): Promise<boolean> {
  const { t } = at;
  const start = sealedStart(at.id);
  // Locked so that a concurrent run's batch and this check take turns.
  const cursor = await readRotation(query, t, at.ownerHash, true);
  await resealSummaries(query, at);
  const [left] = await query<{ n: string }>(
    `SELECT count(*) AS n ${owned(t)} AND m.content LIKE '~sealed%' AND left(m.content, $2) <> $3`,
    [at.owner, start.length, start],
  );
  if (Number(left?.n ?? 0) === 0) {
    await resealContext(query, at);
    await query(`DELETE FROM ${t.ownerRekeys} WHERE owner_hash = $1`, [at.ownerHash]);
    return true;
  }
  if (!cursor) {
    await query(
      `INSERT INTO ${t.ownerRekeys} (owner_hash, from_check)
       SELECT owner_hash, key_check FROM ${t.ownerKeys} WHERE owner_hash = $1 ON CONFLICT DO NOTHING`,
      [at.ownerHash],
    );
  }
  await moveCursor(query, t, at.ownerHash, "0", null);
  return false;
}
