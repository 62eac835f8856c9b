/**
 * The rows of a transfer other than messages and the registry row, written to Postgres: overlays, blocks and
 * entries. Each is written as stored, never re-derived; a row whose identity is stored already is kept and counted as
 * skipped.
 */

import { idsToKnow, rowRecord } from "../../context/legacy-records.js";
import { recordParams } from "../../context/records.js";
import type { StoredCompaction } from "../../contract/message.js";
import type { ImportCounts, TransferRow } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { knownIds } from "../../sql/context-records/postgres.js";
import { storedBlock, storedEntry } from "../../sql/context-store/postgres-sealed.js";
import type { Executor, Query } from "../../sql/engines/postgres/client.js";
import { statement, type Tables } from "../../sql/engines/postgres/tables.js";
import { timestampParam } from "../../sql/engines/postgres/timestamp.js";
import type { KeyedTables } from "../../sql/sealing/postgres.js";
import { clearOwnersHold } from "../../sql/sealing/postgres-clear-owners.js";
import { summaryForms } from "../../sql/sealing/postgres-summaries.js";
import type { RowImportWriter } from "../../store/transfer/base.js";

// In the Citus layout an overlay names its session ($9) and its id is unique within the session only: Citus
// requires the distribution column in every unique key, so the conflict target is (session_id, id).
const insertCompactionsSql = statement((t) => {
  const own = t.layout.sessionColumn("$9::text");
  return `INSERT INTO ${t.compactions} (session_num, id, summary, summary_json, from_message_id,
      to_message_id, details, created_at${own.column})
    SELECT $1::bigint, u.*${own.value} FROM unnest($2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[],
      $7::text[], $8::timestamptz[]) AS u
    ON CONFLICT (${t.layout.sessionKey("id")}) DO NOTHING RETURNING id`;
});

/**
 * Inserts the batch's overlays whose ids are not stored yet (anywhere: overlay ids are store-wide; in the Citus
 * layout, within the session).
 */
export async function writeCompactions(
  query: Query,
  t: Tables,
  session: { num: string; id: string },
  compactions: StoredCompaction[],
  counts: ImportCounts,
): Promise<void> {
  const unique = new Map<string, StoredCompaction>();
  for (const c of compactions) {
    const fields = [c.id, c.summary, c.fromMessageId, c.toMessageId];
    if (fields.some((field) => typeof field !== "string")) {
      throw new SessionError("INVALID_ARGUMENT", "A transferred overlay needs string ids and summary", {
        issues: [{ path: "compactions", rule: "type" }],
      });
    }
    if (!unique.has(c.id)) unique.set(c.id, c);
  }
  const columns: unknown[][] = Array.from({ length: 7 }, () => []);
  const formOf = await summaryForms(query, t, session.id);
  for (const c of unique.values()) {
    const summary = formOf(c.id, c.summary);
    const details = c.details === undefined ? null : JSON.stringify(c.details);
    const createdAt = timestampParam(c.createdAt, `Overlay "${c.id}"`);
    const row = [c.id, summary.content, summary.json, c.fromMessageId, c.toMessageId, details, createdAt];
    for (const [i, value] of row.entries()) columns[i]!.push(value);
  }
  const inserted = (
    await query(insertCompactionsSql(t), [session.num, ...columns, ...t.layout.routeParams(session.id)], true)
  ).length;
  counts.inserted += inserted;
  counts.skipped += compactions.length - inserted;
}

// Rows per statement (the base also cuts a run at a few MiB of text, so one statement's parameters stay bounded).
const BATCH = 500;

const insertBlocksSql = statement(
  (t) => `INSERT INTO ${t.blocks} (key, content, content_json, sealed, session_id, owner)
    SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::boolean[], $5::text[], $6::text[])
    ON CONFLICT (key) DO NOTHING RETURNING key`,
);
// unnest yields the rows in array order, and the identity `seq` is drawn per row in that order: the entries keep
// the stream's storage order.
const insertEntriesSql = statement(
  (
    t,
  ) => `INSERT INTO ${t.entries} (label, key, content, content_json, sealed_chars, search, session_id, owner)
    SELECT u.label, u.key, u.content, u.content_json, u.sealed_chars, u.search::tsvector, u.session_id, u.owner
    FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::integer[], $6::text[], $7::text[], $8::text[])
      AS u(label, key, content, content_json, sealed_chars, search, session_id, owner)
    ON CONFLICT (label, key) DO NOTHING RETURNING label, key`,
);

// A separator no label can hold (Postgres text cannot), so label and key pairs make unambiguous map keys.
const entryKey = (label: string, key: string) => `${label}\u0000${key}`;

/**
 * Writes one run of rows of one kind; returns how many of them were new. In a store with a keyring, in a transaction
 * that holds the owners of the rows written in clear without a key (clear-owners.ts): one that got a key since the
 * look-up makes the run look its keys up again (`DECRYPT_FAILED` without the key), `CONFLICT` past a few tries.
 */
async function writeRun(executor: Executor, t: KeyedTables, run: TransferRow[]): Promise<number> {
  if (!t.keys) return (await writeForms(executor.query.bind(executor), t, run)) ?? 0;
  for (let tries = 1; ; tries++) {
    const written = await executor.transaction((query) => writeForms(query, t, run));
    if (written !== null) return written;
    if (tries >= 3) {
      throw new SessionError(
        "CONFLICT",
        "The key of an owner kept changing while imported rows were written",
      );
    }
  }
}

// The run's rows sealed as their owners' keys say and inserted; null (nothing written) when an owner found without
// a key has one now.
async function writeForms(query: Query, t: KeyedTables, run: TransferRow[]): Promise<number | null> {
  const labels: string[] = [];
  const keys: string[] = [];
  const contents: string[] = [];
  const flags: boolean[] = [];
  const sealed: boolean[] = [];
  const sealedChars: (number | null)[] = [];
  const vectors: (string | null)[] = [];
  const sessionIds: (string | null)[] = [];
  const clear: string[] = [];
  const owners: (string | null)[] = [];
  // Each row's record: the one it carries, else the legacy rule's (context/legacy-records.ts).
  const known = await knownIds(query, t, idsToKnow(run));
  const unique = new Set<string>();
  for (const row of run) {
    const label = row.kind === "entry" ? row.label : "";
    // A key twice in one stream: the first row is the one written, as a row-by-row import would.
    if (unique.has(entryKey(label, row.key))) continue;
    unique.add(entryKey(label, row.key));
    // Sealed again for an owner with a key (sealed-context.ts: an export holds them opened); the search vector is
    // built from the text itself, never from its stored form, as setEntry does.
    const [sessionId, owner] = recordParams(rowRecord(row, known));
    const record = { sessionId, owner };
    let key = row.key;
    if (row.kind === "entry") {
      const stored = await storedEntry(query, t, label, row.key, row.content, record, true);
      // Stored under a digest of its key for an owner with a key (entry-keys.ts).
      key = stored.key;
      if (stored.clear?.ownerHash) clear.push(stored.clear.ownerHash);
      contents.push(stored.content);
      flags.push(stored.json);
      sealedChars.push(stored.sealedChars);
      vectors.push(stored.search);
    } else {
      const stored = await storedBlock(query, t, row.key, row.content, record, true);
      if (stored.clear?.ownerHash) clear.push(stored.clear.ownerHash);
      contents.push(stored.content);
      flags.push(stored.json);
      sealed.push(stored.sealed);
    }
    labels.push(label);
    keys.push(key);
    sessionIds.push(sessionId);
    owners.push(owner);
  }
  if (!(await clearOwnersHold(query, t, clear))) {
    // Read again on the next try: the sessions' owners and whether they are in clear.
    for (const id of sessionIds) if (id !== null) t.keys?.unclear(id);
    return null;
  }
  const rows =
    run[0]!.kind === "block"
      ? await query(insertBlocksSql(t), [keys, contents, flags, sealed, sessionIds, owners], true)
      : await query(
          insertEntriesSql(t),
          [labels, keys, contents, flags, sealedChars, vectors, sessionIds, owners],
          true,
        );
  return rows.length;
}

/**
 * An import of blocks and entries (see StoreTransfer.importRows): runs of a few hundred rows of one kind, one
 * statement each.
 */
export async function rowsImport(ready: () => Promise<Executor>, t: KeyedTables): Promise<RowImportWriter> {
  const executor = await ready();
  return { run: BATCH, write: (run) => writeRun(executor, t, run) };
}
