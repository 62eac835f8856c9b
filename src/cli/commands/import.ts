import { createReadStream, createWriteStream, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { intOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError } from "../errors.js";
import { requireTransfer } from "../inspect/sessions.js";
import { counted } from "../output.js";
import { startProgress } from "../progress.js";
import { checkImport } from "../transfer/check.js";
import type { DanglingReport } from "../transfer/dangling.js";
import { decodeHeader } from "../transfer/format.js";
import { type ImportSummary, readImport } from "../transfer/import.js";
import { DEFAULT_MAX_LINE_BYTES, readLines } from "../transfer/lines.js";
import { SKIP_UNREADABLE_FLAG } from "../transfer/unreadable.js";

/** Copies a stream (stdin) into a private temporary file, so it can be read twice. */
async function spoolInput(input: Readable): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "agent-session-import-"));
  const path = join(dir, "stdin.jsonl");
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await pipeline(input, createWriteStream(path, { mode: 0o600 }));
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}

/** `import`: a JSONL export into the store, idempotently. */
export const importCommand: Command = {
  name: "import",
  summary: "read a JSONL export into the store (idempotent)",
  description:
    "Reads a file written by 'export' (or '-' for stdin) into the database, creating a SQLite file when it does " +
    "not exist. Ids are the identity: sessions, messages, overlays, blocks and entries that are already stored are " +
    "kept as they are and counted as skipped, so importing the same file twice changes nothing the second time. " +
    "Messages keep their ids, tree links and timestamps; registry rows keep their times, usage, owner and pin (a " +
    "file of an older export carries no owner or pin: the import warns on stderr, naming how many sessions). The whole file " +
    "is checked before anything is written: every record must be one the library itself could have stored, and a " +
    "damaged, cut-short or refused file writes nothing; the error names the line. A cached system prompt " +
    "(_system_prompt… block) is only imported for a session the file brings and the database did not hold, unless " +
    "--trust-prompts is given. A message the export could not read (a damaged row, written as `raw`) refuses the " +
    `file; ${SKIP_UNREADABLE_FLAG} leaves such messages out instead, re-attaches their children to the nearest ` +
    "kept ancestor, moves a leaf at one to that ancestor, drops the overlays at them, and reports what it left out " +
    "per session.",
  positionals: ["<file>"],
  required: 1,
  options: {
    "trust-prompts": {
      type: "boolean",
      description: "also import frozen system prompts for sessions that already exist in the database",
    },
    "skip-unreadable": {
      type: "boolean",
      description:
        "leave out unreadable (raw) messages and the overlays at them instead of refusing the file",
    },
    "max-line-bytes": {
      type: "string",
      value: "<n>",
      description: `longest line read, in bytes (default ${DEFAULT_MAX_LINE_BYTES})`,
    },
  },
  examples: [
    "agent-session import backup.jsonl",
    "agent-session import backup.jsonl --db postgres://localhost/app",
    `agent-session import damaged.jsonl ${SKIP_UNREADABLE_FLAG}`,
  ],
  async run({ command, args, out, open, io, progress }) {
    const file = args.positionals[0]!;
    const maxLineBytes = intOption(command, args.values, "max-line-bytes", DEFAULT_MAX_LINE_BYTES);
    const trustPrompts = args.values["trust-prompts"] === true;
    const skipUnreadable = args.values["skip-unreadable"] === true;
    // The file is read twice (check, then write), so stdin is kept in a temporary file first.
    const spool = file === "-" ? await spoolInput(io.stdin) : undefined;
    let summary: ImportSummary & { database: string };
    try {
      const path = spool?.path ?? file;
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) throw new CliError(`no file at ${file}`, "NOT_FOUND");
      if (!stat.isFile()) throw new CliError(`${file} is not a file`, "INVALID_ARGUMENT");
      const read = () => readLines(createReadStream(path), maxLineBytes);
      // The first line is checked before the database is opened, so a wrong file never creates one.
      const lines = read();
      const first = await lines.next();
      await lines.return(undefined);
      if (first.done) throw new CliError(`${file === "-" ? "stdin" : file} is empty`, "INVALID_FILE");
      decodeHeader(first.value);
      const { store, location } = await open("write");
      requireTransfer(store, "import");
      const bar = startProgress(io, progress && stat.size > 0, "import", 2 * stat.size, "bytes");
      try {
        const step = (bytes: number) => bar.increment(bytes);
        // Nothing is written unless the whole file passes the check: a refused file leaves the store as it was.
        const plan = await checkImport(store, read, { trustPrompts, skipUnreadable }, step);
        const result = await readImport(
          store,
          read(),
          step,
          skipUnreadable ? plan : undefined,
          plan.dangling,
        );
        summary = { database: location, ...result };
      } finally {
        bar.stop();
      }
    } finally {
      await spool?.remove();
    }
    if (summary.ownerless > 0) {
      // Once, whatever the output: the sessions are stored, but no longer as their owners' (nothing can add it later).
      io.stderr.write(
        `warning: ${counted(summary.ownerless, "registered session")} in this file carry no owner or pin (an export ` +
          "of an older agent-session): they were imported without an owner and unpinned, so an owner's view does not " +
          "find them and retention does not keep them; export them again with this version to carry both\n",
      );
    }
    if (summary.dangling) io.stderr.write(danglingWarning(summary.dangling));
    if (out.json) return out.result(summary);
    const { sessions, messages, compactions, rows, facts, checkpoints, items, database, unreadable } =
      summary;
    await out.line(
      `Imported into ${database}: ${counted(sessions.read, "session")} (${sessions.registered} newly registered), ` +
        `${counted(messages.inserted, "message")} (${messages.skipped} already there), ` +
        `${counted(compactions.inserted, "overlay")} (${compactions.skipped} already there), ` +
        `${rows.inserted} blocks and entries (${rows.skipped} already there), ` +
        `${counted(facts.inserted, "fact")} (${facts.skipped} already there)` +
        `${checkpoints > 0 ? `, ${counted(checkpoints, "checkpoint")}` : ""}` +
        `${items.inserted + items.skipped > 0 ? `, ${counted(items.inserted, "store item")} (${items.skipped} already there)` : ""}.`,
    );
    for (const left of unreadable ?? []) {
      await out.line(
        `Skipped in session ${JSON.stringify(left.session)}: ${counted(left.messages, "unreadable message")} (${left.messages === 1 ? "its" : "their"} children ` +
          `re-attached to the nearest kept ancestor) and ${counted(left.overlays, "overlay")} at them.`,
      );
    }
  },
};

// Once, whatever the output: what a store written before facts' sources were checked exported, left out.
function danglingWarning({ sources, facts, named }: DanglingReport): string {
  const examples = named.map((n) => `fact "${n.fact}" → message "${n.message}" of session "${n.session}"`);
  return (
    `warning: ${counted(sources, "fact source")} named messages neither stored nor in the file (an export of a store ` +
    `written before facts' sources were checked): they were left out, and ${counted(facts, "fact")} left with no ` +
    `source ${facts === 1 ? "was" : "were"} not imported${examples.length > 0 ? `; ${examples.join(", ")}${sources > examples.length ? ", …" : ""}` : ""}\n`
  );
}
