import { loadBetterSqlite3 } from "../src/sql/engines/sqlite/better-sqlite3.js";
import { fmtNum, mdTable } from "./stats.js";

const Database = loadBetterSqlite3();

const MiB = 1024 * 1024;

/** Returns a Markdown section comparing the FTS tables' pages with the indexed text bytes of each store. */
export function indexSizes(stores: { name: string; file: string; fts: string; text: string }[]): string {
  const rows: string[][] = [];
  for (const store of stores) {
    const db = new Database(store.file, { readonly: true });
    try {
      const fts =
        (
          db.prepare(`SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name LIKE ?`).get(`${store.fts}%`) as {
            bytes: number | null;
          }
        ).bytes ?? 0;
      const text = (db.prepare(store.text).get() as { bytes: number | null }).bytes ?? 0;
      rows.push([
        store.name,
        `${fmtNum(fts / MiB)} MiB`,
        `${fmtNum(text / MiB)} MiB`,
        `${fmtNum(fts / Math.max(1, text))}×`,
      ]);
    } finally {
      db.close();
    }
  }
  return [
    "## Full-text index size",
    "",
    mdTable(["store", "FTS tables", "raw text", "index ÷ text"], rows),
  ].join("\n");
}
