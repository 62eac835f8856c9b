import { OWNER_OPTION, ownerOption } from "../args.js";
import type { Command } from "../command.js";
import { storeStats } from "../inspect/stats.js";
import { bytes, counted, table } from "../output.js";

/** `stats`: totals over the whole store. */
export const stats: Command = {
  name: "stats",
  summary: "sessions, messages, bytes and tokens of the whole store",
  description:
    "Counts sessions (registered and not), messages and overlays on every branch, the bytes of stored message " +
    "JSON, the media payloads offloaded from messages (each stored once), the library's token estimate of those messages, the usage applications recorded with addUsage (tokens " +
    "and cost), context blocks and search entries, and on SQLite the file's size and free pages. It reads every " +
    "session once, so it takes longer on a large store.",
  positionals: [],
  required: 0,
  options: {
    owner: {
      ...OWNER_OPTION,
      description:
        "only this owner's sessions (their messages, bytes, tokens and usage; no store-wide counts)",
    },
  },
  examples: [
    "agent-session stats",
    "agent-session stats --json --db postgres://localhost/app",
    "agent-session stats --owner user-42",
  ],
  async run({ command, args, out, open }) {
    const owner = ownerOption(command, args.values);
    const opened = await open("read");
    const s = await storeStats(opened, owner);
    if (out.json) return out.result(s);
    const rows: string[][] = [
      ["database", `${s.location} (${s.backend})`],
      ...(s.owner === undefined ? [] : [["owner", s.owner]]),
      [
        "sessions",
        `${s.sessions.total} (${s.sessions.registered} registered, ${s.sessions.unregistered} unregistered)`,
      ],
      ["messages", `${s.messages} on all branches, ${counted(s.compactions, "overlay")}`],
      ["stored message JSON", bytes(s.bytes)],
      ["estimated tokens", `${s.tokens} (all stored messages, overlays not applied)`],
      [
        "recorded usage",
        `${s.usage.inputTokens} in, ${s.usage.outputTokens} out, ${s.usage.cacheReadTokens} cache read, ` +
          `${s.usage.cacheWriteTokens} cache write, $${s.usage.cost.toFixed(4)}`,
      ],
    ];
    if (s.attachments) {
      const { attachments } = s;
      rows.splice(rows.length - 2, 0, [
        "attachments",
        `${bytes(attachments.bytes)} in ${attachments.count} media payloads (each stored once)`,
      ]);
    }
    if (s.blocks !== null && s.entries !== null) {
      rows.push([
        "context blocks",
        `${counted(s.blocks, "block")}, ${counted(s.entries, "search entry", "search entries")}`,
      ]);
    }
    if (s.file) {
      const free = s.file.freePages * s.file.pageSize;
      rows.push(["file", `${bytes(s.file.bytes)} on disk, ${bytes(free)} free for reuse`]);
    }
    for (const line of table(rows)) await out.line(line);
  },
};
