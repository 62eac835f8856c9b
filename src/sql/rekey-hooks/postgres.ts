/**
 * Key rotation on Postgres: sql/rekey/steps.ts over Postgres's statements (sql/rekey/postgres.ts) and its hooks
 * here, which differ from SQLite's on purpose: a session's rows are opened through the store's awaited key look-up
 * and re-sealed in one UPDATE that also makes each row's search vector again from the opened text, as blind
 * tokens of the new key (stored-form.ts), so the owner's messages are still found once the old key is gone.
 */

import { storedMessageText } from "../../message/text.js";
import { blindTokensOf } from "../../search/blind-tokens.js";
import { withTimeTokens } from "../../search/date-terms.js";
import type { RekeyOptions, RekeyReport } from "../../store/crypto/rekey-options.js";
import { startRotation, startSealing } from "../../store/crypto/rotation.js";
import { isSealed, sealContent, sealedHash, sealedStart } from "../../store/crypto/seal.js";
import type { PostgresBackend } from "../backend/postgres.js";
import { logNames } from "../change-log/postgres-append-log.js";
import {
  type BlockRow,
  type EntryRow,
  entryOpener,
  readBlockRow,
  storedBlock,
  storedEntry,
} from "../context-store/postgres-sealed.js";
import { keptRecord, NO_RECORD } from "../context-store/records.js";
import type { Executor, Query } from "../engines/postgres/client.js";
import { ownerLexeme, sessionLexeme, toTsvector } from "../engines/postgres/fts.js";
import { runProgram } from "../engines/postgres/program.js";
import { decodeContent } from "../engines/postgres/text.js";
import { postgresFactRekey } from "../facts/postgres.js";
import { perform, type Row } from "../program.js";
import { rekeyStatements } from "../rekey/postgres.js";
import { rekeyClearStatements } from "../rekey/postgres-clear.js";
import { rekeyWith } from "../rekey/steps.js";
import type { RekeyTable, SummaryRow } from "../rekey/table.js";
import { POSTGRES_ROOMS } from "../rooms/postgres.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { vectorTables } from "../vectors/postgres-schema.js";

/** Re-seals `owner`'s messages under the keyring's current key; see {@link RekeyOptions} and docs/PRIVACY.md. */
export function rekeyPostgres(
  backend: PostgresBackend,
  owner: unknown,
  options: RekeyOptions = {},
): Promise<RekeyReport> {
  const t = backend.tables;
  // The connection the rotation started on runs all of it.
  let executor: Executor | undefined;
  return rekeyWith(
    {
      keys: t.keys,
      start: async (checked, sealClear) => {
        executor = await backend.ready();
        // Every check read again: this process's cached ones may predate another process's rotation.
        const begin = sealClear ? startSealing : startRotation;
        return (await t.keys!.guarded(executor.query, (k) => begin(k, checked), true)).value;
      },
      run: (program, write) => {
        const on = executor!;
        // The table's hooks look keys up through the query its statements run on (the transaction's).
        const over = (query: Query) => runProgram(query, program(rekeyTable(t, query)));
        return write ? on.transaction(over) : over(on.query);
      },
    },
    owner,
    options,
  );
}

interface MessageRow extends Row {
  seq: string;
  id: string;
  content: string;
  content_hash: string | null;
  /** The message's time, in epoch milliseconds: its time tokens are indexed again with its words. */
  ms: number;
}

/** Postgres's rekey table in `t`: its statements, and hooks that look keys up through `query`. */
function rekeyTable(t: KeyedTables, query: Query): RekeyTable {
  const keys = t.keys!;
  const statements = rekeyStatements(t);
  const clear = rekeyClearStatements(t, {
    vectors: vectorTables(t).vectors,
    changes: logNames(t).table,
  });
  return {
    ...statements,
    ...postgresFactRekey(t),
    keyring: keys.keys.keyring,
    rooms: POSTGRES_ROOMS.flatMap((room) => (room.rekey ? [room.rekey(t)] : [])),
    // The rows not under the new key already, in one statement; a row written meanwhile (its hash changed) keeps
    // the writer's content and vector, sealed under the recorded (new) key by its guard.
    ...clear,
    // With `sealClear` the rows in clear too: opened as they are, their vector of clear words replaced.
    *resealMessages(at, session, rows) {
      const start = sealedStart(at.id);
      const stale = (rows as MessageRow[]).filter((r) =>
        isSealed(r.content) ? !r.content.startsWith(start) : at.sealClear,
      );
      if (stale.length === 0) return 0;
      const opened = yield* perform(() =>
        keys.run(query, (k) => stale.map((r) => k.open(session.session_id, r.content, r.id))),
      );
      // Each row's vector as an append writes it: the opened text's blind tokens under the new key, with the
      // session's and the owner's lexemes.
      const scope = sessionLexeme(session.session_id);
      const blind = blindTokensOf(at.key);
      const written = yield statements.writeMessages(session, [
        stale.map((r) => r.seq),
        stale.map((r, i) => sealContent(at.key, session.session_id, r.id, opened[i]!)),
        opened.map((json) => sealedHash(at.key, json)),
        stale.map((r) => r.content_hash),
        opened.map((json, i) =>
          toTsvector(withTimeTokens(storedMessageText(json), stale[i]!.ms), scope, blind),
        ),
        ownerLexeme(at.owner),
      ]);
      return written.length;
    },
    *clearSummaries(owner) {
      const rows = (yield clear.clearSummaries(owner)) as (SummaryRow & { summary_json: boolean })[];
      return rows.map((row) => ({
        ...row,
        summary: decodeContent(row.summary, row.summary_json),
        stored: row.summary,
      }));
    },
    *sealSummaries(at, rows) {
      const opened = yield* perform(() =>
        keys.run(query, (k) => rows.map((r) => k.open(r.session_id, r.summary, r.id, "overlay"))),
      );
      return rows.map((row, i) => sealContent(at.key, row.session_id, row.id, opened[i]!, "overlay"));
    },
    // Sealed again for the owner of the row's own record (a re-seal records nothing).
    *resealBlock(row) {
      const block = row as unknown as BlockRow & { key: string };
      const stored = yield* perform(async () => {
        const content = await readBlockRow(query, t, block.key, block);
        return storedBlock(query, t, block.key, content, keptRecord(block, NO_RECORD));
      });
      yield statements.writeBlock(block, stored);
    },
    *resealEntry(row) {
      const entry = row as unknown as EntryRow & { label: string };
      const stored = yield* perform(async () => {
        const { key, content } = await entryOpener(query, t, entry.label)(entry);
        return storedEntry(query, t, entry.label, key, content, keptRecord(entry, NO_RECORD));
      });
      yield statements.writeEntry(entry, stored);
    },
  };
}
