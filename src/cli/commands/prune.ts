import { eraseSelected, type RetentionPolicy, selectForSweep } from "../../store/retention.js";
import { intOption, OWNER_OPTION, ownerOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { cliEraser, parseDuration, reclaimSpace, requireRegistry } from "../inspect/prune.js";
import { bytes, counted, shortTime, table } from "../output.js";
import { startProgress } from "../progress.js";

/** `prune`: retention by last activity, on the library's sweep (docs/PRIVACY.md, Retention). */
export const prune: Command = {
  name: "prune",
  summary: "erase sessions with no activity for a while, then reclaim space",
  description:
    "Runs a retention sweep (the library's manager.sweep, docs/PRIVACY.md): erases whole registered sessions whose " +
    "last activity (the registry's updated_at: any append, rename, usage, compaction…) is older than --older-than, " +
    "with their messages on every branch, overlays, search-index rows, vectors, stored blocks and frozen prompt, " +
    "usage, change-log rows and registry row; the change feed announces each as `erased`. Pinned sessions are never " +
    "erased; --keep-newest <n> keeps each owner's n newest sessions whatever their age (sessions without an owner " +
    "are not kept by it); --owner keeps to one owner's sessions. Unregistered sessions have no activity time and are " +
    "never pruned. Safe to run from several processes at once: each session is erased only if it still qualifies. " +
    "--dry-run lists what would go and erases nothing. Afterwards SQLite gives the space back with a full VACUUM " +
    "(the schema does not enable auto_vacuum, so PRAGMA incremental_vacuum would do nothing); VACUUM rewrites the " +
    "file, needs free disk space about its size and blocks writers while it runs. On Postgres deleted rows are " +
    "reclaimed by autovacuum; run `agent-session purge` to take the erased text out of the store's files.",
  positionals: [],
  required: 0,
  options: {
    "older-than": { type: "string", value: "<age>", description: "required: e.g. 30d, 12h, 2w, 90m, 45s" },
    "keep-newest": {
      type: "string",
      value: "<n>",
      description: "keep each owner's n newest sessions whatever their age",
    },
    owner: OWNER_OPTION,
    "dry-run": { type: "boolean", description: "list what would be erased; erase nothing" },
  },
  examples: [
    "agent-session prune --older-than 30d --dry-run",
    "agent-session prune --older-than 90d --keep-newest 5",
    "agent-session prune --older-than 7d --owner user-42",
  ],
  async run({ command, args, out, open, io, progress }) {
    const age = stringOption(args.values, "older-than");
    if (age === undefined)
      throw new UsageError("prune needs --older-than <age>, e.g. --older-than 30d", command);
    const maxAgeMs = parseDuration(age);
    if (maxAgeMs === null)
      throw new UsageError(
        `--older-than must look like 30d, 12h, 2w, 90m or 45s: ${JSON.stringify(age)} is not a valid duration`,
        command,
      );
    const keep =
      args.values["keep-newest"] === undefined
        ? undefined
        : intOption(command, args.values, "keep-newest", 0);
    const owner = ownerOption(command, args.values);
    const dryRun = args.values["dry-run"] === true;
    const policy: RetentionPolicy =
      keep === undefined ? { maxAgeMs } : { maxAgeMs, keepNewestPerOwner: keep };
    const { store, location } = await open("read");
    requireRegistry(store);
    const selection = await selectForSweep(store.registry, policy, owner === undefined ? {} : { owner });
    const { cutoff, candidates } = selection;
    const sessions = candidates.map((s) => ({ id: s.id, name: s.name, updatedAt: s.updated_at }));
    let report = null;
    let reclaim = null;
    if (!dryRun && candidates.length > 0) {
      const erase = cliEraser(
        store,
        sessions.map((s) => s.id),
      );
      const bar = startProgress(io, progress, "prune", candidates.length, "sessions");
      let shown = 0;
      try {
        report = await eraseSelected(selection, erase, {
          onProgress: ({ done }) => {
            bar.increment(done - shown);
            shown = done;
          },
        });
      } finally {
        bar.stop();
      }
      reclaim = reclaimSpace(store, location);
    }
    const erased = new Set(report?.erased.sessionIds ?? []);
    const deleted = erased.size;
    if (out.json) {
      return out.result({
        cutoff,
        dryRun,
        ...(owner === undefined ? {} : { owner }),
        ...(keep === undefined ? {} : { keepNewest: keep }),
        examined: selection.examined,
        candidates: candidates.length,
        sessions,
        deleted,
        skipped: report?.skipped ?? 0,
        erased: report?.erased ?? null,
        reclaim,
      });
    }
    const whose = owner === undefined ? "" : ` of owner ${JSON.stringify(owner)}`;
    const beyond = keep === undefined ? "" : ` beyond its owner's ${keep} newest`;
    if (candidates.length === 0)
      return out.line(
        `No session${whose} to prune: none unpinned${beyond} has been inactive since ${shortTime(cutoff)} UTC (older than ${age}); ${counted(selection.examined, "session")} examined.`,
      );
    const shownRows = dryRun ? sessions : sessions.filter((s) => erased.has(s.id));
    await out.line(
      `${dryRun ? "Would erase" : "Erased"} ${counted(dryRun ? candidates.length : deleted, "session")}${whose} inactive since ${shortTime(cutoff)} UTC:`,
    );
    for (const line of table(shownRows.map((s) => [s.id, s.name || '""', shortTime(s.updatedAt)])))
      await out.line(`  ${line}`);
    if (dryRun) return out.line("Nothing was erased (--dry-run).");
    if (report) {
      const r = report.erased;
      await out.line(
        `Erased ${counted(r.messages, "message")}, ${counted(r.compactions, "compaction")}, ${counted(r.vectors, "vector")}, ${counted(r.blocks, "block")}, ${counted(r.entries, "search entry", "search entries")}, ${counted(r.attachments, "attachment")}, ${counted(r.changes, "change-log row")}, ${counted(r.facts, "fact")}.`,
      );
      if (report.skipped > 0)
        await out.line(
          `Skipped ${counted(report.skipped, "session")}: erased meanwhile by another sweeper, written to or pinned since, or held by a writer.`,
        );
    }
    if (reclaim?.method === "VACUUM") {
      await out.line(
        `Reclaimed space with VACUUM: ${bytes(reclaim.bytesBefore ?? 0)} → ${bytes(reclaim.bytesAfter ?? 0)}.`,
      );
    } else if (reclaim?.method === "autovacuum") {
      await out.line(
        "Postgres reclaims the space of deleted rows with autovacuum; `agent-session purge` takes erased text out of its files.",
      );
    }
  },
};
