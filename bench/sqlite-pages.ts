/**
 * A SQLite file's size, measured in a process of its own: a store driven by another SQLite library in this process
 * (`@mastra/libsql` is libSQL's) shares its POSIX locks with any connection this process opens on the file, and
 * closing that connection drops the other library's locks (POSIX locks are per process): after one look at an
 * open `@mastra/libsql` file, every later look, from any process, saw ~10 % fewer pages than the file held once the
 * process ended (1,000 messages: 352 pages, 394 at the end; measured in a child from the start, 393). Measured with the write-ahead log checkpointed into the file (TRUNCATE),
 * as pages: `page_count` × `page_size` (free pages included, as in the file), and each table's and index's bytes
 * (`dbstat`). Used by bench/mastra.ts and bench/mastra-bytes.ts.
 */
import { execFileSync } from "node:child_process";

/** The bytes of a SQLite file and of each of its tables and indexes. */
export interface SqlitePages {
  bytes: number;
  tables: Map<string, number>;
}

// Run by a child `node`: better-sqlite3 (the build for this Node, as loadBetterSqlite3 picks it), a checkpoint, then
// the pages.
const CHILD = `
const file = process.argv[1];
const major = Number(process.versions.node.split(".")[0]);
let Database;
for (const name of major >= 22 ? ["better-sqlite3-node22", "better-sqlite3"] : ["better-sqlite3"]) {
  try { Database = require(name); break; } catch {}
}
const db = new Database(file);
db.pragma("wal_checkpoint(TRUNCATE)");
const bytes = db.pragma("page_count", { simple: true }) * db.pragma("page_size", { simple: true });
const tables = db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all();
db.close();
process.stdout.write(JSON.stringify({ bytes, tables }));
`;

/** The pages of `file` now (read by a child process: see the module's comment). */
export function sqlitePages(file: string): SqlitePages {
  const out = execFileSync(process.execPath, ["-e", CHILD, file], { encoding: "utf8" });
  const { bytes, tables } = JSON.parse(out) as { bytes: number; tables: { name: string; bytes: number }[] };
  return { bytes, tables: new Map(tables.map((t) => [t.name, t.bytes])) };
}
