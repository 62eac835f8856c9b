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
  options: {},
  examples: ["agent-session stats", "agent-session stats --json --db postgres://localhost/app"],
  async run({ out, open }) {
    const opened = await open("read");
    const s = await storeStats(opened);
    if (out.json) return out.result(s);
    const rows: string[][] = [
      ["database", `${s.location} (${s.backend})`],
      [
        "sessions",
        `${s.sessions.total} (${s.sessions.registered} registered, ${s.sessions.unregistered} unregistered)`,
      ],
      ["messages", `${s.messages} on all branches, ${counted(s.compactions, "overlay")}`],
      ["stored message JSON", bytes(s.bytes)],
      [
        "attachments",
        `${bytes(s.attachments.bytes)} in ${s.attachments.count} media payloads (each stored once)`,
      ],
      ["estimated tokens", `${s.tokens} (all stored messages, overlays not applied)`],
      [
        "recorded usage",
        `${s.usage.inputTokens} in, ${s.usage.outputTokens} out, ${s.usage.cacheReadTokens} cache read, ` +
          `${s.usage.cacheWriteTokens} cache write, $${s.usage.cost.toFixed(4)}`,
      ],
      [
        "context blocks",
        `${counted(s.blocks, "block")}, ${counted(s.entries, "search entry", "search entries")}`,
      ],
    ];
    if (s.file) {
      const free = s.file.freePages * s.file.pageSize;
      rows.push(["file", `${bytes(s.file.bytes)} on disk, ${bytes(free)} free for reuse`]);
    }
    for (const line of table(rows)) await out.line(line);
  },
};
