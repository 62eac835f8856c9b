import { intOption, OWNER_OPTION, ownerOption } from "../args.js";
import type { Command } from "../command.js";
import { DEFAULT_SESSION_LABEL, listSessions } from "../inspect/sessions.js";
import { shortTime, table } from "../output.js";

/** `ls`: the sessions of the store, newest activity first. */
export const ls: Command = {
  name: "ls",
  summary: "list sessions, newest activity first",
  description:
    "Lists registered sessions newest activity first, then sessions that hold messages but were never registered " +
    "(written through a plain Session), by id. Message counts cover every branch. The session of a Session " +
    'created without forSession has the empty id and shows as (default session); --json gives its id as "". ' +
    "A pinned session (which a retention sweep never erases) shows PINNED: yes; --json gives pinned: true or false.",
  positionals: [],
  required: 0,
  options: {
    limit: { type: "string", value: "<n>", description: "show at most n sessions" },
    owner: OWNER_OPTION,
  },
  examples: ["agent-session ls", "agent-session ls --limit 10 --json", "agent-session ls --owner user-42"],
  async run({ command, args, out, open }) {
    const limit = intOption(command, args.values, "limit", Number.POSITIVE_INFINITY);
    const { store, location } = await open("read");
    const owner = ownerOption(command, args.values);
    const sessions = await listSessions(store, limit, owner);
    if (out.json) return out.result(sessions);
    if (sessions.length === 0)
      return out.line(`No sessions${owner === undefined ? "" : ` of ${owner}`} in ${location}.`);
    // The owner and pin columns only when some listed session has one: a store without them lists as before.
    const owners = sessions.some((s) => s.owner !== null);
    const pins = sessions.some((s) => s.pinned);
    const rows = sessions.map((s) => [
      s.id === "" ? DEFAULT_SESSION_LABEL : s.id,
      s.registered ? (s.nameSealed ? "(sealed name)" : s.name || '""') : "(unregistered)",
      s.messages === null ? "?" : String(s.messages),
      s.updatedAt ? shortTime(s.updatedAt) : "-",
      s.usage ? `${s.usage.inputTokens}/${s.usage.outputTokens}` : "-",
      s.usage ? `$${s.usage.cost.toFixed(4)}` : "-",
      ...(owners ? [s.owner ?? "-"] : []),
      ...(pins ? [s.pinned ? "yes" : "-"] : []),
    ]);
    const header = [
      ...["ID", "NAME", "MESSAGES", "LAST ACTIVITY (UTC)", "TOKENS IN/OUT", "COST"],
      ...(owners ? ["OWNER"] : []),
      ...(pins ? ["PINNED"] : []),
    ];
    for (const line of table([header, ...rows])) {
      await out.line(line);
    }
  },
};
