import type { AttachmentStats, AttachmentStore } from "../../contract/attachments.js";
import type { SessionMessage } from "../../contract/message.js";
import { type Attachment, hydrateAsync } from "../../store/media/offload.js";
import type { AttachmentImport } from "../../store/transfer/attachments.js";
import type { RowWritten, Written } from "../../store/written.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { statement, type Tables } from "../engines/postgres/tables.js";

/**
 * Postgres storage of offloaded payloads (migration 6): `agent_attachments` holds each payload once under its
 * SHA-256 (bytea, no chunking: a value may hold 1 GB), `agent_attachment_links` one row per (message row,
 * payload); a payload's reference count is the number of its link rows. A writer that links and a writer that
 * collects the same payload serialise on a transaction-scoped advisory lock per hash, taken after the session's
 * head lock and in hash order (no deadlock), so a statement run after the lock sees the other's committed links:
 * a payload is never deleted while a committed row points at it, and never left behind by the last one.
 */

// Advisory lock namespace ("agat") and the first 32 bits of the hash as the key.
const lockSql = statement(
  () => `SELECT pg_advisory_xact_lock(1634166644, ('x' || substr(h, 1, 8))::bit(32)::integer)
    FROM (SELECT DISTINCT unnest($1::text[]) AS h ORDER BY 1) AS hashes`,
);
const insertSql = statement(
  (t) => `INSERT INTO ${t.attachments} (hash, data) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING`,
);
// In the Citus layout the link names its session ($3): the conflict target must hold the distribution column.
const linkSql = statement((t) => {
  const own = t.layout.sessionColumn("$3::text");
  return `INSERT INTO ${t.attachmentLinks} (message_seq, hash${own.column}) SELECT $1::bigint, unnest($2::text[])${own.value}
    ON CONFLICT (${t.layout.sessionKey("message_seq, hash")}) DO NOTHING`;
});
const collectSql = statement(
  (t) => `DELETE FROM ${t.attachments} a WHERE a.hash = ANY($1::text[])
    AND NOT EXISTS (SELECT 1 FROM ${t.attachmentLinks} l WHERE l.hash = a.hash)`,
);
// The Citus layout shards payloads by hash and links by session, so it cannot correlate the two in one DELETE:
// the hashes still linked are read first (under the same per-hash locks), then the others deleted.
const stillLinkedSql = statement(
  (t) => `SELECT DISTINCT hash FROM ${t.attachmentLinks} WHERE hash = ANY($1::text[])`,
);
const deleteHashesSql = statement((t) => `DELETE FROM ${t.attachments} WHERE hash = ANY($1::text[])`);
// The payloads among $2 that rows of session number $1 (named $3 in the Citus layout) link.
const linkedSql = statement(
  (t) => `SELECT a.hash, a.data FROM ${t.attachments} a WHERE a.hash = ANY($2::text[]) AND a.hash IN (
    SELECT l.hash FROM ${t.attachmentLinks} l JOIN ${t.messages} m ON m.seq = l.message_seq${t.layout.onSession("m", "l.session_id")}
    WHERE m.session_num = $1::bigint${t.layout.onSession("l", "$3::text")})`,
);
const loadSql = statement((t) => `SELECT hash, data FROM ${t.attachments} WHERE hash = ANY($1::text[])`);
const headLockSql = statement((t) => `SELECT num FROM ${t.heads} WHERE session_id = $1 FOR UPDATE`);
// The links of row `$1` to payloads other than `$2` (those an update no longer points at).
const unlinkOthersSql = statement(
  (t) =>
    `DELETE FROM ${t.attachmentLinks} WHERE message_seq = $1::bigint AND hash <> ALL($2::text[])${t.layout.onSession(null, "$3::text")} RETURNING hash`,
);
const unlinkMessagesSql = statement(
  (t) => `DELETE FROM ${t.attachmentLinks} WHERE message_seq IN (
    SELECT m.seq FROM ${t.messages} m WHERE m.session_num = $1 AND m.id = ANY($2::text[])${t.layout.onSession("m", "$3::text")})${t.layout.onSession(null, "$3::text")} RETURNING hash`,
);
const unlinkSessionSql = statement(
  (t) => `DELETE FROM ${t.attachmentLinks} WHERE message_seq IN (
    SELECT m.seq FROM ${t.messages} m WHERE m.session_num = $1${t.layout.onSession("m", "$2::text")})${t.layout.onSession(null, "$2::text")} RETURNING hash`,
);

/** An executor whose transactions join the caller's (the code it wraps opens one of its own). */
export function joined(executor: Executor, query: Query): Executor {
  return { kind: executor.kind, query, transaction: (fn) => fn(query), close: () => executor.close() };
}

/** Stores the new payloads and links them to the row `seq` of session `sessionId`. */
async function link(
  query: Query,
  t: Tables,
  sessionId: string,
  seq: unknown,
  attachments: readonly Attachment[],
  all: string[],
) {
  await query(lockSql(t), [all]);
  for (const { hash, bytes } of attachments) await query(insertSql(t), [hash, bytes]);
  await query(linkSql(t), [seq, all, ...t.layout.routeParams(sessionId)]);
}

/** Deletes the payloads among `hashes` that no row links to any more (locks them first, see above). */
async function collect(query: Query, t: Tables, hashes: readonly string[]): Promise<void> {
  const distinct = [...new Set(hashes)];
  if (distinct.length === 0) return;
  await query(lockSql(t), [distinct]);
  if (!t.layout.readsPerShard) {
    await query(collectSql(t), [distinct]);
    return;
  }
  const linked = new Set((await query<{ hash: string }>(stillLinkedSql(t), [distinct])).map((r) => r.hash));
  const unlinked = distinct.filter((hash) => !linked.has(hash));
  if (unlinked.length > 0) await query(deleteHashesSql(t), [unlinked]);
}

/**
 * Runs a write of a message whose stored form is `stored` (the engine's stored-form.ts made it: the form and the
 * payloads it offloaded; `write` gets that form and an executor joined to this transaction, and
 * answers with the `seq` of the row it wrote) and links its payloads to that row in the same transaction, after
 * the write (which holds the session's head lock by then). `replaces` is true for an update: the links to
 * payloads the new content no longer points at are released after the new ones are made, so a payload the update
 * keeps is never deleted. An append without payloads skips all of it (one statement). Answers the write's record.
 */
export async function writeStored<T extends object, F>(
  executor: Executor,
  t: Tables,
  sessionId: string,
  stored: { form: F; attachments: Attachment[] },
  replaces: boolean,
  write: (form: F, executor: Executor) => Promise<RowWritten<T, string>>,
): Promise<Written<T>> {
  if (stored.attachments.length === 0 && !replaces) return write(stored.form, executor);
  return executor.transaction(async (query) => {
    // Locked first so the write's statements see a fresh snapshot (a concurrent append of the same id is then a
    // duplicate, not a unique violation that would abort this transaction). A session that does not exist yet
    // has no row to lock: its creator's links are why the links below are fixed after the write, not before.
    await query(headLockSql(t), [sessionId]);
    const written = await write(stored.form, joined(executor, query));
    const { seq } = written;
    // Nothing written (an id already stored, identical content): the stored row keeps the links it has.
    if (seq === undefined) return written;
    const hashes = stored.attachments.map((a) => a.hash);
    const released = replaces
      ? await query<{ hash: string }>(unlinkOthersSql(t), [seq, hashes, ...t.layout.routeParams(sessionId)])
      : [];
    if (hashes.length > 0) await link(query, t, sessionId, seq, stored.attachments, hashes);
    await collect(
      query,
      t,
      released.map((r) => r.hash),
    );
    return written;
  });
}

/** Releases the payloads of messages of one session, by id, inside the caller's transaction (head locked). */
export async function releaseMessages(
  query: Query,
  t: Tables,
  session: { num: unknown; id: string },
  ids: readonly string[],
) {
  const params = [session.num, [...ids], ...t.layout.routeParams(session.id)];
  const rows = await query<{ hash: string }>(unlinkMessagesSql(t), params);
  await collect(
    query,
    t,
    rows.map((r) => r.hash),
  );
}

/** Releases the payloads of every message of a session, inside the caller's transaction (head locked). */
export async function releaseSession(
  query: Query,
  t: Tables,
  session: { num: unknown; id: string },
): Promise<void> {
  const params = [session.num, ...t.layout.routeParams(session.id)];
  const rows = await query<{ hash: string }>(unlinkSessionSql(t), params);
  await collect(
    query,
    t,
    rows.map((r) => r.hash),
  );
}

/** The stored bytes of these hashes: one statement for a whole read. */
export async function loadAttachments(
  query: Query,
  t: Tables,
  hashes: readonly string[],
): Promise<Map<string, Uint8Array>> {
  const rows = await query<{ hash: string; data: Uint8Array }>(loadSql(t), [[...hashes]]);
  // PGlite returns a Uint8Array, pg a Buffer: one type for every backend (a view, no copy).
  const asBuffer = (data: Uint8Array) =>
    Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return new Map(rows.map((row) => [row.hash, asBuffer(row.data)]));
}

/** Restores the payloads of messages read from this database (one lookup for all of them). */
export function hydrate<T extends SessionMessage | null>(
  executor: Executor,
  t: Tables,
  messages: T[],
): Promise<T[]> {
  return hydrateAsync(messages, (hashes) => loadAttachments(executor.query, t, hashes));
}

/**
 * What an imported row needs linked (checked before the row is written): payloads that came with the stream
 * before the row (the first `mark`, see AttachmentImport.mark) are stored when new, the others must be stored
 * already (`INVALID_ARGUMENT` otherwise).
 */
export async function planImportLinks(
  query: Query,
  t: Tables,
  session: { num: unknown; id: string },
  messageId: string,
  content: string,
  incoming: AttachmentImport,
  mark: number,
): Promise<(seq: unknown) => Promise<void>> {
  const { hashes, provided } = incoming.needs(content, mark);
  if (hashes.length === 0) return async () => {};
  await query(lockSql(t), [hashes]);
  // Only payloads this session's rows link already (see AttachmentImport.assertComplete).
  const unsent = incoming.unsent(hashes, mark);
  const rows =
    unsent.length === 0
      ? []
      : await query<{ hash: string; data: Uint8Array }>(linkedSql(t), [
          session.num,
          unsent,
          ...t.layout.routeParams(session.id),
        ]);
  const linked = new Map(rows.map((row) => [row.hash, row.data]));
  incoming.assertComplete(messageId, content, linked, mark);
  return (seq) => link(query, t, session.id, seq, provided, hashes);
}

/** The {@link AttachmentStore} of a Postgres store. */
export class PostgresAttachments implements AttachmentStore {
  constructor(
    private readonly ready: () => Promise<Executor>,
    private readonly t: Tables,
  ) {}

  async stats(): Promise<AttachmentStats> {
    const executor = await this.ready();
    const [row] = await executor.query<{ count: string; bytes: string | null }>(
      `SELECT count(*) AS count, sum(octet_length(data)) AS bytes FROM ${this.t.attachments}`,
    );
    return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  async get(hash: string): Promise<Uint8Array | null> {
    if (typeof hash !== "string") return null;
    const executor = await this.ready();
    return (await loadAttachments(executor.query, this.t, [hash])).get(hash) ?? null;
  }
}
