import { intOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { requireSession } from "../inspect/sessions.js";
import { preview, shortTime, table } from "../output.js";

/** `search`: full-text search across sessions. */
export const search: Command = {
  name: "search",
  summary: "full-text search across sessions",
  description:
    "Searches every session (or one, with --session) with the library's query language: every word must match, " +
    'in any order; "quoted phrases" match adjacent words; a word also finds its family (deploy, deploying, ' +
    "deployment). --branch active keeps only hits on each session's active path; all (default) includes abandoned " +
    "branches and says which they are.",
  positionals: ["<query>"],
  required: 1,
  options: {
    session: { type: "string", value: "<id>", description: "only this session" },
    branch: {
      type: "string",
      value: "active|all",
      description: "active path only, or every branch (default all)",
    },
    limit: { type: "string", value: "<n>", description: "most hits (default 20, at most 1000)" },
  },
  examples: [
    'agent-session search "deploy friday"',
    "agent-session search migration --session demo-deploy --branch active",
  ],
  async run({ command, args, out, open }) {
    const branch = stringOption(args.values, "branch") ?? "all";
    if (branch !== "active" && branch !== "all") {
      throw new UsageError(`--branch must be "active" or "all", got ${JSON.stringify(branch)}`, command);
    }
    const limit = intOption(command, args.values, "limit", 20);
    if (limit > 1000) throw new UsageError("--limit must be at most 1000", command);
    const sessionId = stringOption(args.values, "session");
    const { store } = await open("read");
    if (sessionId !== undefined) await requireSession(store, sessionId);
    const hits = await store.searchMessages(args.positionals[0]!, {
      limit,
      branch,
      ...(sessionId === undefined ? {} : { sessionId }),
    });
    if (out.json) return out.result(hits);
    if (hits.length === 0) return out.line("No matches.");
    const rows = hits.map((h) => [
      h.sessionId ?? "",
      h.id,
      h.role,
      h.onActivePath ? "active" : "other branch",
      shortTime(h.createdAt),
      preview(h.content, 60),
    ]);
    for (const line of table([["SESSION", "MESSAGE", "ROLE", "BRANCH", "STORED (UTC)", "TEXT"], ...rows])) {
      await out.line(line);
    }
  },
};
