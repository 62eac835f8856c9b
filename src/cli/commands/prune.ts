import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import {
  deleteSessions,
  parseDuration,
  reclaimSpace,
  requireRegistry,
  staleSessions,
} from "../inspect/prune.js";
import { bytes, counted, shortTime, table } from "../output.js";
import { startProgress } from "../progress.js";

/** `prune`: retention by last activity. */
export const prune: Command = {
  name: "prune",
  summary: "delete sessions with no activity for a while, then reclaim space",
  description:
    "Deletes whole registered sessions whose last activity (the registry's updated_at: any append, rename, usage, " +
    "compaction…) is older than --older-than: their messages on every branch, overlays, search-index rows, stored " +
    "blocks and frozen prompt, and registry row. Unregistered sessions have no activity time and are never pruned. " +
    "--dry-run lists what would go and deletes nothing. Afterwards SQLite gives the space back with a full VACUUM " +
    "(the schema does not enable auto_vacuum, so PRAGMA incremental_vacuum would do nothing); VACUUM rewrites the " +
    "file, needs free disk space about its size and blocks writers while it runs. On Postgres deleted rows are " +
    "reclaimed by autovacuum.",
  positionals: [],
  required: 0,
  options: {
    "older-than": { type: "string", value: "<age>", description: "required: e.g. 30d, 12h, 2w, 90m, 45s" },
    "dry-run": { type: "boolean", description: "list what would be deleted; delete nothing" },
  },
  examples: ["agent-session prune --older-than 30d --dry-run", "agent-session prune --older-than 90d"],
  async run({ command, args, out, open, io, progress }) {
    const age = stringOption(args.values, "older-than");
    if (age === undefined)
      throw new UsageError("prune needs --older-than <age>, e.g. --older-than 30d", command);
    const ms = parseDuration(age);
    if (ms === null)
      throw new UsageError(
        `--older-than must look like 30d, 12h, 2w, 90m or 45s: ${JSON.stringify(age)} is not a valid duration`,
        command,
      );
    const cutoff = new Date(Date.now() - ms).toISOString();
    const dryRun = args.values["dry-run"] === true;
    const { store, location } = await open("read");
    requireRegistry(store);
    const stale = await staleSessions(store, cutoff);
    let deleted = 0;
    let reclaim = null;
    if (!dryRun && stale.length > 0) {
      const bar = startProgress(io, progress, "prune", stale.length, "sessions");
      try {
        deleted = await deleteSessions(
          store,
          stale.map((s) => s.id),
          bar,
        );
      } finally {
        bar.stop();
      }
      reclaim = reclaimSpace(store, location);
    }
    if (out.json) return out.result({ cutoff, dryRun, sessions: stale, deleted, reclaim });
    if (stale.length === 0)
      return out.line(`No session has been inactive since ${shortTime(cutoff)} UTC (older than ${age}).`);
    await out.line(
      `${dryRun ? "Would delete" : "Deleted"} ${counted(dryRun ? stale.length : deleted, "session")} inactive since ${shortTime(cutoff)} UTC:`,
    );
    for (const line of table(stale.map((s) => [s.id, s.name || '""', shortTime(s.updatedAt)])))
      await out.line(`  ${line}`);
    if (dryRun) return out.line("Nothing was deleted (--dry-run).");
    if (reclaim?.method === "VACUUM") {
      await out.line(
        `Reclaimed space with VACUUM: ${bytes(reclaim.bytesBefore ?? 0)} → ${bytes(reclaim.bytesAfter ?? 0)}.`,
      );
    } else if (reclaim?.method === "autovacuum") {
      await out.line("Postgres reclaims the space of deleted rows with autovacuum.");
    }
  },
};
