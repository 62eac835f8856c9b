import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { requireTransfer } from "../inspect/sessions.js";
import { counted } from "../output.js";
import { startProgress } from "../progress.js";
import { writeExport } from "../transfer/export.js";
import type { ExportCounts } from "../transfer/format.js";
import { openOutputFile } from "../transfer/output-file.js";

function summaryLine(c: ExportCounts): string {
  const entries = counted(c.entries, "search entry", "search entries");
  return `Exported ${counted(c.sessions, "session")}, ${counted(c.messages, "message")}, ${counted(c.compactions, "overlay")}, ${counted(c.blocks, "block")}, ${entries}.`;
}

/** `export`: sessions as versioned JSONL, losslessly. */
export const exportCommand: Command = {
  name: "export",
  summary: "write sessions as JSONL (lossless, versioned; see docs/CLI.md)",
  description:
    "Writes the whole store, or the named sessions, as JSONL: sessions with their registry row and usage, every " +
    "message with its tree link and original timestamp, overlays, context blocks (and, for a whole store, search " +
    "entries). Output goes to stdout unless --output is given (then it is written to a temporary file and renamed, " +
    "so a failed export never leaves a partial file). The same data always gives the same bytes, whichever backend " +
    "it is read from. The summary goes to stderr (to stdout with --output --json).",
  positionals: ["[session…]"],
  required: 0,
  options: {
    output: {
      type: "string",
      short: "o",
      value: "<file>",
      description: "write to this file instead of stdout",
    },
  },
  examples: [
    "agent-session export > backup.jsonl",
    "agent-session export demo-deploy demo-trip -o two.jsonl",
  ],
  async run({ args, out, open, io, progress }) {
    const { store } = await open("read");
    requireTransfer(store, "export");
    const file = stringOption(args.values, "output");
    let counts: ExportCounts;
    if (file === undefined) {
      const bar = startProgress(io, progress, "export", 0, "messages");
      try {
        counts = await writeExport(store, (chunk) => out.write(chunk), {
          sessionIds: args.positionals,
          progress: bar,
          countFirst: progress,
        });
      } finally {
        bar.stop();
      }
      io.stderr.write(`${out.json ? JSON.stringify(counts) : summaryLine(counts)}\n`);
      return;
    }
    const output = await openOutputFile(file);
    const bar = startProgress(io, progress, "export", 0, "messages");
    try {
      counts = await writeExport(store, (chunk) => output.write(chunk), {
        sessionIds: args.positionals,
        progress: bar,
        countFirst: progress,
      });
      await output.commit();
    } catch (error) {
      await output.abort();
      throw error;
    } finally {
      bar.stop();
    }
    if (out.json) await out.result({ file, ...counts });
    else await out.line(`${summaryLine(counts)} Wrote ${file}.`);
  },
};
