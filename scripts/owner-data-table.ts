// Prints the declarations of owner data (src/store/owner-data.ts) as docs/PRIVACY.md holds them:
// `node --import tsx scripts/owner-data-table.ts`; test/privacy/owner-data.test.ts checks the doc against them.
import { POSTGRES_OWNER_DATA } from "../src/sql/owner-data/postgres.js";
import { SQLITE_OWNER_DATA } from "../src/sql/owner-data/sqlite.js";
import { ownerDataMarkdown } from "../src/store/owner-data.js";

console.log(
  `SQLite:\n\n${ownerDataMarkdown(SQLITE_OWNER_DATA)}\n\nPostgres, PGlite, Citus:\n\n${ownerDataMarkdown(POSTGRES_OWNER_DATA)}`,
);
