import type { TransferSession } from "../../contract/transfer.js";
import type { PostgresBackend } from "../../sql/backend/postgres.js";
import {
  type BlockRow,
  type EntryRow,
  entryOpener,
  readBlockRow,
} from "../../sql/context-store/postgres-sealed.js";
import type { Executor } from "../../sql/engines/postgres/client.js";
import type { Tables } from "../../sql/engines/postgres/tables.js";
import { loadAttachments } from "../../sql/media/postgres.js";
import { openContent } from "../../sql/sealing/postgres-stored-form.js";
import { compactionsOf, type StoredCompactionRow } from "../../sql/sealing/postgres-summaries.js";
import { SqlTransfer } from "../../sql/transfer/export.js";
import { type PostgresHead, postgresExportTable } from "../../sql/transfer/postgres-export.js";
import { sessionImport } from "../../sql/transfer/postgres-import.js";
import type { RowImportWriter, SessionImportWriter } from "../../store/transfer/base.js";
import type { PostgresSessionRegistry } from "../registry.js";
import { POSTGRES_IMPORT } from "./import.js";
import { rowsImport } from "./rows.js";

/**
 * Lossless, streaming export and import for a {@link PostgresStore}, with the order, idempotency and latest-leaf
 * rules of SQLite's: the export is the SQL stores' one (sql/transfer/export.ts) over Postgres' table (sql/transfer/postgres-export.ts),
 * which opens rows with the helpers handed in here; the
 * import writes through import.ts and rows.ts.
 */
export class PostgresTransfer extends SqlTransfer<PostgresHead> {
  /**
   * `store`: the feed and change log an import publishes to, read at each import (the store makes them after
   * this); omitted by adoption, whose imports are not published.
   */
  constructor(
    private readonly ready: () => Promise<Executor>,
    private readonly t: Tables,
    registry: PostgresSessionRegistry,
    private readonly store?: Pick<PostgresBackend, "feed" | "changeLog">,
  ) {
    const queryOf = async () => {
      const executor = await ready();
      return executor.query.bind(executor);
    };
    super(
      postgresExportTable(ready, t, {
        openMessage: async (head, row) =>
          openContent(await queryOf(), t, head.session_id, row.content as string, row.id),
        openCompaction: async (head, { seq: _seq, ...row }) => {
          const [compaction] = await compactionsOf(await queryOf(), t, head.session_id, [
            row as unknown as StoredCompactionRow,
          ]);
          return compaction!;
        },
        attachment: async (hash) => (await loadAttachments(await queryOf(), t, [hash])).get(hash) ?? null,
        openBlock: async (row) =>
          readBlockRow(await queryOf(), t, row.key as string, row as unknown as BlockRow),
        openEntry: async (row) =>
          entryOpener(await queryOf(), t, row.label as string)(row as unknown as EntryRow),
      }),
      registry,
      store,
    );
  }

  /** One session import (see import.ts), logged in the store's change log when it has one. */
  protected openImport(header: TransferSession): Promise<SessionImportWriter> {
    return sessionImport(this.ready, this.t, POSTGRES_IMPORT, header, this.store?.changeLog);
  }

  protected openRows(): Promise<RowImportWriter> {
    return rowsImport(this.ready, this.t);
  }
}
