/**
 * Postgres' table for the session import (the program: import.ts): awaited, each batch and the
 * last step in one transaction of the executor. A batch first locks the session's head (creating it when missing),
 * as every session write does, so concurrent appenders wait for the batch rather than interleave with it, and bumps
 * the head's version, so an appender whose snapshot predates it retries instead of missing the rows (postgres/append.ts).
 * The registry row gives an owned session's stored messages the owner lexeme in the same statement. The items are
 * written by Postgres' own plan (postgres/transfer/import.ts), which with the head's statements hands them in
 * ({@link PostgresImportHelpers}). In the Citus layout each statement over a per-session table
 * also names its session (its last parameter), so it runs on the one node that holds it (sql/engines/postgres/layout.ts).
 */

import type { TransferSession } from "../../contract/transfer.js";
import { assertSessionId } from "../../message/ids.js";
import type { ContentKeys } from "../../store/crypto/content-keys.js";
import type { LoggedChange } from "../../store/feed/remote.js";
import { sessionInfoValues } from "../../store/registry-rows.js";
import { importedName } from "../../store/session-names.js";
import type { AttachmentImport } from "../../store/transfer/attachments.js";
import type { SessionImportWriter, TransferBatch } from "../../store/transfer/base.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { ownedMessagesCte } from "../engines/postgres/fts.js";
import { call, runProgram } from "../engines/postgres/program.js";
import { statement, type Tables } from "../engines/postgres/tables.js";
import { command, prepared, query } from "../program.js";
import { type ImportCounted, type ImportTable, type LeafStatements, sqlSessionImport } from "./import.js";

/** What the import's table runs of Postgres's middle, handed in by the engine (postgres/transfer/import.ts). */
export interface PostgresImportHelpers {
  /** The head's upsert that every session write locks first (postgres/append-attempt.ts lockSql): its `num`. */
  lockHead(t: Tables): string;
  /** The newest childless row (postgres/writes.ts newestLeafSql). */
  newestLeaf(t: Tables): string;
  /** The head pointed at a leaf with its path's totals (postgres/writes.ts refreshHeadSql). */
  refreshHead(t: Tables): string;
  /** A batch's items, Postgres's own plan (postgres/transfer/import.ts writeItems): how many were inserted. */
  items(
    query: Query,
    t: Tables,
    session: { num: string; id: string },
    batch: Readonly<TransferBatch>,
    result: ImportCounted,
    attachments: AttachmentImport,
  ): Promise<number>;
  /** A registry time as a parameter, refused unless ISO (sql/engines/postgres/timestamp.ts). */
  time(value: unknown, what: string, path: string): string;
}

/** What the import needs of the store's keys (sql/sealing/postgres.ts PostgresKeys): an owner's name sealed. */
export interface ImportKeys {
  run<T>(query: Query, use: (keys: ContentKeys) => T): Promise<T>;
}

/** The tables an import names, with the store's keys when it has a keyring. */
export type ImportTables = Tables & { readonly keys?: ImportKeys | undefined };

/** The change log an import records its `reset` in (sql/change-log/postgres.ts). */
export interface PostgresImportLog {
  recordIn(query: Query, change: LoggedChange): Promise<number>;
}

// An owned session's messages stored already take the owner lexeme in the same statement (sql/engines/postgres/fts.ts).
const registerSql = statement(
  (t) => `WITH r AS (
      INSERT INTO ${t.sessions} (id, name, parent_session_id, model, source, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, estimated_cost, end_reason, created_at, updated_at, owner, pinned)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::timestamptz, $13::timestamptz, $14, $15)
      ON CONFLICT (id) DO NOTHING RETURNING id, owner
    ), ${ownedMessagesCte(t, "r")} SELECT id FROM r`,
);
const bumpSql = statement(
  (t) =>
    `UPDATE ${t.heads} SET version = version + 1, message_count = message_count + $2
      WHERE num = $1::bigint${t.layout.onSession(null, "$3::text")}`,
);
const lockNumSql = statement(
  (t) =>
    `SELECT num FROM ${t.heads} WHERE num = $1::bigint${t.layout.onSession(null, "$2::text")} FOR UPDATE`,
);
const leafSql = statement(
  (t) =>
    `SELECT seq FROM ${t.messages} WHERE session_num = $1::bigint AND id = $2${t.layout.onSession(null, "$3::text")}`,
);

// The head is locked as every session write locks it, so an appender waits for the new leaf.
function leafStatements(t: Tables, helpers: PostgresImportHelpers): LeafStatements {
  const own = (id: string) => t.layout.routeParams(id);
  return {
    lock: ({ num, id }) => query(lockNumSql(t), [num, ...own(id)]),
    leaf: ({ num, id }, leafId) => prepared(leafSql(t), [num, leafId, ...own(id)]),
    newest: ({ num, id }) => prepared(helpers.newestLeaf(t), [num, ...own(id)]),
    point: ({ num, id }, leaf, now) => ({
      ...command(helpers.refreshHead(t), [num, leaf, 0, now, ...own(id)]),
      prepared: true,
    }),
  };
}

/** The import table of a Postgres store on `executor`, logging each import in `log` when there is one. */
export function postgresImportTable(
  executor: Executor,
  t: ImportTables,
  helpers: PostgresImportHelpers,
  log: PostgresImportLog | undefined,
): ImportTable {
  return {
    run: (program, atomic) =>
      atomic
        ? executor.transaction((q) => runProgram(q, program))
        : runProgram(executor.query.bind(executor), program),
    *name(info) {
      const { keys } = t;
      if (!keys) return importedName(undefined, info);
      const [named] = yield call(async (q) => [{ value: await keys.run(q, (k) => importedName(k, info)) }]);
      return named!.value as string;
    },
    register: (info, name) => {
      const time = (value: string, column: string) => helpers.time(value, `Session "${info.id}"`, column);
      return query(registerSql(t), [...sessionInfoValues({ ...info, name }, time), info.pinned === true]);
    },
    *head(sessionId) {
      const [head] = yield query(helpers.lockHead(t), [sessionId, new Date().toISOString()]);
      return String(head!.num);
    },
    *items(session, batch, result, attachments) {
      const head = { num: String(session.num), id: session.id };
      const [wrote] = yield call(async (q) => [
        { value: await helpers.items(q, t, head, batch, result, attachments) },
      ]);
      return wrote!.value as number;
    },
    // The version bump tells appenders whose snapshot predates this batch to retry (see postgres/append.ts).
    *bump({ num, id }, inserted) {
      yield prepared(bumpSql(t), [num, inserted, ...t.layout.routeParams(id)]);
    },
    leaf: leafStatements(t, helpers),
    log: (sessionId) =>
      log && call(async (q) => [{ value: await log.recordIn(q, { sessionId, type: "reset", ids: [] }) }]),
  };
}

/**
 * One session import (see StoreTransfer.importSession), logged in `log` when there is one. The header's id is
 * checked before anything is written.
 */
export async function sessionImport(
  ready: () => Promise<Executor>,
  t: ImportTables,
  helpers: PostgresImportHelpers,
  header: TransferSession,
  log: PostgresImportLog | undefined,
): Promise<SessionImportWriter> {
  assertSessionId(header.id);
  return sqlSessionImport(postgresImportTable(await ready(), t, helpers, log), header);
}
