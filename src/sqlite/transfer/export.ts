import type { TransferSession } from "../../contract/transfer.js";
import type { SqliteBackend } from "../../sql/backend/sqlite.js";
import {
  type BlockReadRow,
  type EntryRow,
  entryOpener,
  readBlockRow,
} from "../../sql/context-store/sqlite-sealed.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { loadAttachments } from "../../sql/media/sqlite-tables.js";
import { SqlTransfer } from "../../sql/transfer/export.js";
import { type SqliteHead, sqliteExportTable } from "../../sql/transfer/sqlite-export.js";
import { sessionImport } from "../../sql/transfer/sqlite-import.js";
import type { RowImportWriter, SessionImportWriter } from "../../store/transfer/base.js";
import { compactionOf, type EncodedCompactionRow } from "../history.js";
import { SqliteSessionRegistry } from "../registry.js";
import { rowsImport, SQLITE_IMPORT } from "./import.js";

/**
 * Lossless, streaming export and import for a SQLite store: the export is the SQL stores' one
 * (sql/transfer/export.ts) over SQLite's table (sql/transfer/sqlite-export.ts), which opens rows with the helpers
 * handed in here; the import writes through import.ts.
 */
export class SqliteTransfer extends SqlTransfer<SqliteHead> {
  /** `store`: the feed and change log an import publishes to, read at each import (the store makes them after this). */
  constructor(
    private readonly driver: SqlDriver,
    private readonly store?: Pick<SqliteBackend, "feed" | "changeLog">,
  ) {
    super(
      sqliteExportTable(driver, {
        openCompaction: (head, row) =>
          compactionOf(driver, head.session_id, row as unknown as EncodedCompactionRow),
        attachment: (hash) => loadAttachments(driver, [hash]).get(hash) ?? null,
        openBlock: (row) => readBlockRow(driver, row.key as string, row as unknown as BlockReadRow),
        openEntry: (row) =>
          entryOpener(driver, row.label as string)(row.key as string, row as unknown as EntryRow),
      }),
      new SqliteSessionRegistry(driver),
      store,
    );
  }

  /** One session import (see import.ts), logged in the store's change log when it has one. */
  protected async openImport(header: TransferSession): Promise<SessionImportWriter> {
    return sessionImport(this.driver, SQLITE_IMPORT, header, this.store?.changeLog);
  }

  protected async openRows(): Promise<RowImportWriter> {
    return rowsImport(this.driver);
  }
}
