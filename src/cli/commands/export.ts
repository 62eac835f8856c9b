import { OWNER_OPTION, ownerOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError } from "../errors.js";
import { ownerSessionIds, requireTransfer } from "../inspect/sessions.js";
import { counted } from "../output.js";
import { startProgress } from "../progress.js";
import type { ExportOptions } from "../transfer/export.js";
import { writeExport } from "../transfer/export.js";
import type { ExportCounts } from "../transfer/format.js";
import { openOutputFile } from "../transfer/output-file.js";

function summaryLine(c: ExportCounts): string {
  const entries = counted(c.entries, "search entry", "search entries");
  return `Exported ${counted(c.sessions, "session")}, ${counted(c.messages, "message")}, ${counted(c.compactions, "overlay")}, ${counted(c.blocks, "block")}, ${entries}, ${counted(c.facts, "fact")}${c.checkpoints > 0 ? `, ${counted(c.checkpoints, "checkpoint")}` : ""}${c.items > 0 ? `, ${counted(c.items, "store item")}` : ""}.`;
}

/**
 * The sessions to export: the named ones, or with an owner the owner's (the named ones must be the owner's; none
 * named: all of the owner's with the blocks and entries recorded as the owner's, and an owner without sessions
 * exports only those).
 */
async function selectSessions(
  store: Parameters<typeof ownerSessionIds>[0],
  named: readonly string[],
  owner: string | undefined,
): Promise<Pick<ExportOptions, "sessionIds" | "exact" | "owner">> {
  if (owner === undefined) return { sessionIds: named };
  const owned = await ownerSessionIds(store, owner);
  const mine = new Set(owned);
  const other = named.find((id) => !mine.has(id));
  if (other !== undefined) throw new CliError(`session ${JSON.stringify(other)} not found`, "NOT_FOUND");
  if (named.length > 0) return { sessionIds: named, exact: true };
  return { sessionIds: owned, exact: true, owner };
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
    owner: {
      ...OWNER_OPTION,
      description:
        "only this owner's sessions and their blocks, with the blocks and entries recorded as the owner's unless " +
        "sessions are named (a named session of another owner is not found)",
    },
  },
  examples: [
    "agent-session export > backup.jsonl",
    "agent-session export demo-deploy demo-trip -o two.jsonl",
    "agent-session export --owner user-42 -o user-42.jsonl",
  ],
  async run({ command, args, out, open, io, progress }) {
    const owner = ownerOption(command, args.values);
    const { store } = await open("read");
    requireTransfer(store, "export");
    const selection = await selectSessions(store, args.positionals, owner);
    const file = stringOption(args.values, "output");
    let counts: ExportCounts;
    if (file === undefined) {
      const bar = startProgress(io, progress, "export", 0, "messages");
      try {
        counts = await writeExport(store, (chunk) => out.write(chunk), {
          ...selection,
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
        ...selection,
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
