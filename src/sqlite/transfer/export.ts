import type { TransferSession } from "../../contract/transfer.js";
import type { SqlDriver } from "../../sql/engines/sqlite/driver.js";
import { SqlTransfer } from "../../sql/transfer/export.js";
import type { RowImportWriter, SessionImportWriter } from "../../store/transfer/base.js";
import type { SqliteBackend } from "../backend.js";
import { SqliteSessionRegistry } from "../registry.js";
import { type SqliteHead, sqliteExportTable } from "../statements/transfer-export.js";
import { sessionImport } from "../statements/transfer-import.js";
import { rowsImport } from "./import.js";

/**
 * Lossless, streaming export and import for a SQLite store: the export is the SQL stores' one
 * (sql/transfer/export.ts) over SQLite's table; the import writes through import.ts.
 */
export class SqliteTransfer extends SqlTransfer<SqliteHead> {
  /** `store`: the feed and change log an import publishes to, read at each import (the store makes them after this). */
  constructor(
    private readonly driver: SqlDriver,
    private readonly store?: Pick<SqliteBackend, "feed" | "changeLog">,
  ) {
    super(sqliteExportTable(driver), new SqliteSessionRegistry(driver), store);
  }

  /** One session import (see import.ts), logged in the store's change log when it has one. */
  protected async openImport(header: TransferSession): Promise<SessionImportWriter> {
    return sessionImport(this.driver, header, this.store?.changeLog);
  }

  protected async openRows(): Promise<RowImportWriter> {
    return rowsImport(this.driver);
  }
}
