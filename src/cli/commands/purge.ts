import type { PurgeCapableStore } from "../../store/purge.js";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError, UsageError } from "../errors.js";

function canPurge(store: object): store is PurgeCapableStore {
  return typeof (store as Partial<PurgeCapableStore>).purge === "function";
}

/** `purge`: makes deleted text unreadable in the store's files (docs/PRIVACY.md). */
export const purge: Command = {
  name: "purge",
  summary: "make everything deleted so far unreadable in the store's files",
  description:
    "Runs the store's purge (docs/PRIVACY.md), the step after a delete that takes the deleted bytes out of the " +
    "store's files. SQLite: merges the search indexes and checkpoints the write-ahead log into the database, " +
    "truncating it (deletes already overwrite their content: secure_delete is on). Postgres: rewrites each of the " +
    "store's tables with VACUUM FULL (writes to a table wait while it is rewritten; a table whose lock is not " +
    "granted within --lock-timeout is left for the next purge and reported), or with --mode vacuum runs VACUUM and " +
    "REINDEX CONCURRENTLY, which block no write but leave freed bytes in pages that still hold live rows. " +
    "Safe to run from several processes at once; prints each step and how long it took.",
  positionals: [],
  required: 0,
  options: {
    mode: { type: "string", value: "<rewrite|vacuum>", description: "Postgres only: default rewrite" },
    "lock-timeout": {
      type: "string",
      value: "<ms>",
      description: "Postgres only: how long to wait for a table's lock (default 2000)",
    },
  },
  examples: ["agent-session purge ./sessions.db", "agent-session purge --pg postgres://… --mode vacuum"],
  async run({ command, args, out, open }) {
    const mode = stringOption(args.values, "mode");
    if (mode !== undefined && mode !== "rewrite" && mode !== "vacuum")
      throw new UsageError(`--mode must be rewrite or vacuum, got ${JSON.stringify(mode)}`, command);
    const timeout = stringOption(args.values, "lock-timeout");
    const lockTimeoutMs = timeout === undefined ? undefined : Number(timeout);
    if (lockTimeoutMs !== undefined && (!Number.isInteger(lockTimeoutMs) || lockTimeoutMs < 1))
      throw new UsageError(
        `--lock-timeout must be a whole number of ms >= 1, got ${JSON.stringify(timeout)}`,
        command,
      );
    const { store } = await open("read");
    if (!canPurge(store)) throw new CliError(`the ${store.backend} store cannot purge`, "UNSUPPORTED");
    const options = {
      ...(mode === undefined ? {} : { mode }),
      ...(lockTimeoutMs === undefined ? {} : { lockTimeoutMs }),
    };
    const report = await store.purge(options);
    if (out.json) return out.result(report);
    for (const step of report.steps) {
      const on = step.target === undefined ? "" : ` ${step.target}`;
      const left = step.incomplete === undefined ? "" : ` — ${step.incomplete}`;
      await out.line(`${step.action}${on}: ${step.ms} ms${left}`);
    }
    await out.line(
      report.complete
        ? `Purged in ${report.ms} ms: nothing deleted before this purge is left in the store's files.`
        : `Purge incomplete after ${report.ms} ms: run it again (the steps above say what was left).`,
    );
  },
};
