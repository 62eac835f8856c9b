import { createReadStream, statSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Command } from "../command.js";
import { CliError } from "../errors.js";
import { requireTransfer } from "../inspect/sessions.js";
import { startProgress } from "../progress.js";
import { decodeHeader } from "../transfer/format.js";
import { type ImportSummary, readImport } from "../transfer/import.js";

async function* prepend(first: string, rest: AsyncIterator<string>): AsyncGenerator<string> {
  yield first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** `import`: a JSONL export into the store, idempotently. */
export const importCommand: Command = {
  name: "import",
  summary: "read a JSONL export into the store (idempotent)",
  description:
    "Reads a file written by 'export' (or '-' for stdin) into the database, creating a SQLite file when it does " +
    "not exist. Ids are the identity: sessions, messages, overlays, blocks and entries that are already stored are " +
    "kept as they are and counted as skipped, so importing the same file twice changes nothing the second time. " +
    "Messages keep their ids, tree links and timestamps; registry rows keep their times and usage. Each session is " +
    "written in batches as it is read; if a file turns out damaged or cut short, what came before is imported and " +
    "the error names the line.",
  positionals: ["<file>"],
  required: 1,
  options: {},
  examples: [
    "agent-session import backup.jsonl",
    "agent-session import backup.jsonl --db postgres://localhost/app",
  ],
  async run({ args, out, open, io, progress }) {
    const file = args.positionals[0]!;
    let input: Readable;
    let size = 0;
    if (file === "-") input = io.stdin;
    else {
      const stat = statSync(file, { throwIfNoEntry: false });
      if (!stat) throw new CliError(`no file at ${file}`, "NOT_FOUND");
      if (!stat.isFile()) throw new CliError(`${file} is not a file`, "INVALID_ARGUMENT");
      size = stat.size;
      input = createReadStream(file, { encoding: "utf8" });
    }
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    let summary: ImportSummary & { database: string };
    try {
      // The first line is checked before the database is opened, so a wrong file never creates one.
      const rest = lines[Symbol.asyncIterator]();
      const first = await rest.next();
      if (first.done) throw new CliError(`${file === "-" ? "stdin" : file} is empty`, "INVALID_FILE");
      decodeHeader(first.value);
      const { store, location } = await open("write");
      requireTransfer(store, "import");
      // stdin has no known size, so there is nothing to measure progress against.
      const bar = startProgress(io, progress && size > 0, "import", size, "bytes");
      try {
        const result = await readImport(store, prepend(first.value, rest), (bytes) => bar.increment(bytes));
        summary = { database: location, ...result };
      } finally {
        bar.stop();
      }
    } finally {
      lines.close();
      input.destroy();
    }
    if (out.json) return out.result(summary);
    const { sessions, messages, compactions, rows, database } = summary;
    await out.line(
      `Imported into ${database}: ${sessions.read} sessions (${sessions.registered} newly registered), ` +
        `${messages.inserted} messages (${messages.skipped} already there), ` +
        `${compactions.inserted} overlays (${compactions.skipped} already there), ` +
        `${rows.inserted} blocks and entries (${rows.skipped} already there).`,
    );
  },
};
