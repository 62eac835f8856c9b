import { intOption, OWNER_OPTION, ownerOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { requireOwners, requireSession } from "../inspect/sessions.js";
import { requireOwnerKeyring } from "../keyring.js";
import { preview, shortTime, table } from "../output.js";

/** `search`: ranked recall (or an all-words search) across sessions. */
export const search: Command = {
  name: "search",
  summary: "ranked search across sessions",
  description:
    "Searches every session (or one, with --session) as a model's session_search does: a question as written " +
    "finds the messages matching its content words, those matching more of them (with the turns next to them) " +
    'first; stop words alone find nothing; "quoted phrases" match adjacent words; a word also finds its family ' +
    "(deploy, deploying, deployment). --match all needs every word. --branch active keeps only hits on each " +
    "session's active path; all (default) includes abandoned branches and says which they are. A hit inside a " +
    "compacted range names its overlay; --context N prints the N turns before and after each hit.",
  positionals: ["<query>"],
  required: 1,
  options: {
    session: { type: "string", value: "<id>", description: "only this session" },
    owner: OWNER_OPTION,
    branch: {
      type: "string",
      value: "active|all",
      description: "active path only, or every branch (default all)",
    },
    limit: { type: "string", value: "<n>", description: "most hits (default 20, at most 1000)" },
    match: { type: "string", value: "any|all", description: "ranked recall (default any) or every word" },
    role: { type: "string", value: "<role>", description: "only messages of this role" },
    since: { type: "string", value: "<time>", description: "only messages stored at or after this ISO time" },
    until: { type: "string", value: "<time>", description: "only messages stored before this ISO time" },
    context: {
      type: "string",
      value: "<n>",
      description: "also show n turns before and after each hit (0-10)",
    },
  },
  examples: [
    'agent-session search "When did we move the deployment to Friday?"',
    'agent-session search "deploy friday" --match all --role assistant --context 1',
    "agent-session search migration --session demo-deploy --branch active",
    'agent-session search "billing address" --owner user-42',
    'agent-session search "billing address" --owner user-42 --master-key-file ./master.key',
  ],
  async run({ command, args, out, open, keyring }) {
    const branch = stringOption(args.values, "branch") ?? "all";
    if (branch !== "active" && branch !== "all") {
      throw new UsageError(`--branch must be "active" or "all", got ${JSON.stringify(branch)}`, command);
    }
    const limit = intOption(command, args.values, "limit", 20);
    if (limit > 1000) throw new UsageError("--limit must be at most 1000", command);
    const match = stringOption(args.values, "match") ?? "any";
    if (match !== "any" && match !== "all") {
      throw new UsageError(`--match must be "any" or "all", got ${JSON.stringify(match)}`, command);
    }
    const context = intOption(command, args.values, "context", 0);
    if (context > 10) throw new UsageError("--context must be at most 10", command);
    const sessionId = stringOption(args.values, "session");
    const filters: Record<string, string> = {};
    for (const name of ["role", "since", "until"] as const) {
      const value = stringOption(args.values, name);
      if (value === undefined) continue;
      // Checked here too (the store would refuse it as INVALID_ARGUMENT, exit 1): a bad time is a usage error.
      if (name !== "role" && !Number.isFinite(Date.parse(value)))
        throw new UsageError(
          `--${name} must be an ISO-8601 time (e.g. 2026-01-31 or 2026-01-31T09:00:00Z), got ${JSON.stringify(value)}`,
          command,
        );
      filters[name] = value;
    }
    const owner = ownerOption(command, args.values);
    const opened = await open("read");
    const { store } = opened;
    if (owner !== undefined) requireOwners(store);
    // Without the keyring an encrypted owner's search would find nothing, which reads as "No matches.".
    await requireOwnerKeyring(opened, owner, keyring);
    if (sessionId !== undefined) {
      const summary = await requireSession(store, sessionId);
      // Another owner's session is not found, as in the owner's view of a SessionManager.
      if (owner !== undefined && summary.owner !== owner)
        throw new CliError(`session ${JSON.stringify(sessionId)} not found`, "NOT_FOUND");
    }
    const hits = await store.searchMessages(args.positionals[0]!, {
      ...(owner === undefined ? {} : { owner }),
      limit,
      branch,
      match,
      context,
      ...filters,
      ...(sessionId === undefined ? {} : { sessionId }),
    });
    if (out.json) return out.result(hits);
    if (hits.length === 0) return out.line("No matches.");
    const rows = hits.map((h) => [
      h.sessionId || "(default)",
      h.id,
      h.role,
      h.onActivePath ? "active" : "other branch",
      h.compactedBy === undefined ? "" : "compacted",
      shortTime(h.createdAt),
      preview(h.content, 60),
    ]);
    const header = ["SESSION", "MESSAGE", "ROLE", "BRANCH", "SUMMARY", "STORED (UTC)", "TEXT"];
    if (context === 0) {
      for (const line of table([header, ...rows])) await out.line(line);
      return;
    }
    // With context, each hit is a small block under one header: its row, the turns before, the hit itself
    // marked, the turns after. The rows are laid out together so their columns line up under the header.
    const [headerLine, ...hitLines] = table([header, ...rows]);
    await out.line(headerLine);
    for (const [i, hit] of hits.entries()) {
      if (i > 0) await out.line("");
      await out.line(hitLines[i]);
      for (const turn of hit.context?.before ?? [])
        await out.line(`    ${turn.role}: ${preview(turn.content, 80)}`);
      await out.line(`  > ${hit.role}: ${preview(hit.content, 80)}`);
      for (const turn of hit.context?.after ?? [])
        await out.line(`    ${turn.role}: ${preview(turn.content, 80)}`);
    }
  },
};
