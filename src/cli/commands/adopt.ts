import { existsSync } from "node:fs";
import type { SessionStore } from "../../contract/store.js";
import { sqliteHasTable } from "../../sqlite/maintenance.js";
import {
  type AdoptionReport,
  type AdoptOptions,
  describeAdoption,
  REFERENCE_TABLES,
} from "../../store/adopt/adopt.js";
import type { Command } from "../command.js";
import { CliError } from "../errors.js";
import { isPostgresUrl, maskUrl, probeSqlitePath, readPostgres } from "../store.js";

/** A store that can adopt the reference's tables (SQLite and Postgres). */
interface AdoptingStore extends SessionStore {
  adopted: AdoptionReport | null;
  adoptReference(options?: AdoptOptions): Promise<AdoptionReport | null>;
}

function isAdopting(store: SessionStore): store is AdoptingStore {
  return typeof (store as Partial<AdoptingStore>).adoptReference === "function";
}

function noReferenceTables(location: string, untouched = false): string {
  const tables = `No reference tables (${REFERENCE_TABLES.join(", ")}) in ${location}`;
  return untouched ? `${tables}; nothing was written.` : `${tables}.`;
}

// Opening writable creates agent-session's tables, so a database with nothing to adopt is not opened at all: an
// empty file, another application's SQLite database without the reference's tables, or a Postgres database
// without them on the connection's search_path. The path checks (directory, device, not SQLite) are the ones
// every command makes.
async function nothingToAdopt(db: string): Promise<boolean> {
  if (isPostgresUrl(db)) {
    const { hasReferenceTables } = await import("../../postgres/adopt/adopt.js");
    return !(await readPostgres(db, hasReferenceTables));
  }
  const kind = probeSqlitePath(db, "read");
  return kind === "empty" || (kind === "other-sqlite" && !sqliteHasTable(db, REFERENCE_TABLES));
}

/** `adopt`: moves what the reference (agents@0.22) wrote into agent-session's tables. */
export const adopt: Command = {
  name: "adopt",
  summary: "adopt the data Cloudflare's Session API (agents@0.22) wrote into the same database",
  description:
    "Finds the reference's tables (assistant_messages, assistant_compactions, assistant_sessions, " +
    "cf_agents_context_blocks, cf_agents_search_entries) in a SQLite file or a Postgres database (on its " +
    "search_path) and copies their rows into agent-session's tables: messages with their tree and timestamps, " +
    "overlays, registry rows with names, fork parents and usage, context blocks and cached prompts, search entries. " +
    "Every copied row is read back and compared. Opening a store does this automatically once; this command runs " +
    "it again (rows already adopted are skipped and re-verified) and lists rows that could not be adopted (they " +
    "stay where they are). The reference's tables are left untouched unless --drop is given, which drops them " +
    "only when every row was adopted and verified.",
  positionals: [],
  required: 0,
  options: {
    drop: { type: "boolean", description: "drop the reference's tables after a clean, verified adoption" },
  },
  examples: [
    "agent-session adopt --db ./do-storage.sqlite",
    "agent-session adopt --db postgres://user@host/db --drop",
  ],
  async run({ db, args, out, open }) {
    if (!isPostgresUrl(db) && !existsSync(db)) throw new CliError(`no database at ${db}`, "NOT_FOUND");
    if (await nothingToAdopt(db)) {
      const location = isPostgresUrl(db) ? maskUrl(db) : db;
      if (out.json) return out.result({ location, report: null });
      return out.line(noReferenceTables(location, true));
    }
    const { store, location } = await open("write");
    if (!isAdopting(store))
      throw new CliError("this store cannot adopt the reference's tables", "UNSUPPORTED");
    const drop = args.values.drop === true;
    // Opening may have adopted already; without --drop that is the report to show.
    const report = store.adopted && !drop ? store.adopted : await store.adoptReference({ dropSource: drop });
    if (out.json) return out.result({ location, report });
    if (!report) return out.line(noReferenceTables(location));
    await out.line(`${location}: ${describeAdoption(report)}.`);
    for (const row of report.rejected) {
      await out.line(
        `  left in place: ${row.table} ${row.sessionId ? `${row.sessionId}/` : ""}${row.id}: ${row.reason}`,
      );
    }
    if (report.rejectedCount > report.rejected.length) {
      await out.line(`  … and ${report.rejectedCount - report.rejected.length} more`);
    }
    for (const what of report.differing)
      await out.line(`  already stored with other content (kept): ${what}`);
    if (report.dropped) await out.line("The reference's tables were dropped.");
    else await out.line("The reference's tables were left untouched.");
  },
};
