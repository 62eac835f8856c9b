import {
  type Fact,
  type FactCapableStore,
  type FactScope,
  type FactStatus,
  hasFactStore,
} from "../../contract/facts.js";
import { intOption, OWNER_OPTION, ownerOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { requireOwners, requireSession } from "../inspect/sessions.js";
import { shortTime } from "../output.js";

/** The facts listed by default, and at most. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;
/** The facts past the listed ones counted at most (pages of the store's size, 100): beyond, "10000+ more". */
const COUNTED_MORE = 10_000;
const PAGE = 100;
const ALL_STATUSES: readonly FactStatus[] = ["current", "superseded", "invalidated"];

/** `facts`: the facts learned for one owner or one session, newest first, with their sources. */
export const facts: Command = {
  name: "facts",
  summary: "list the facts learned for an owner or a session, with their sources",
  description:
    "Lists the facts of one scope newest first (docs/FACTS.md): an owner's (--owner), or a session's (--session: " +
    "the facts its learning went to, which are its owner's when it has one, else its own). Each fact with its " +
    "status, whom it is about, when it was observed, its producer and its sources (session and message ids). " +
    "Current facts only unless --all-status (superseded and invalidated ones too, with what replaced them). At " +
    "most --limit facts are printed (default 50, at most 1000); the facts past them are counted (up to 10000) " +
    "and said, never cut silently.",
  positionals: [],
  required: 0,
  options: {
    session: { type: "string", value: "<id>", description: "the facts of this session's scope" },
    owner: { ...OWNER_OPTION, description: "the facts of this owner" },
    "all-status": { type: "boolean", description: "superseded and invalidated facts too" },
    limit: {
      type: "string",
      value: "<n>",
      description: `most facts (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`,
    },
  },
  examples: [
    "agent-session facts --owner user-42",
    "agent-session facts --session demo-deploy --all-status --json",
  ],
  async run({ command, args, out, open }) {
    const sessionId = stringOption(args.values, "session");
    const owner = ownerOption(command, args.values);
    if ((sessionId === undefined) === (owner === undefined))
      throw new UsageError("facts needs --session <id> or --owner <id> (one of them)", command);
    const limit = intOption(command, args.values, "limit", DEFAULT_LIMIT);
    if (limit < 1 || limit > MAX_LIMIT)
      throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`, command);
    const status = args.values["all-status"] === true ? ALL_STATUSES : (["current"] as const);
    const { store } = await open("read");
    if (!hasFactStore(store))
      throw new CliError(`the ${store.backend} store keeps no facts: it has no fact store`, "UNSUPPORTED");
    let scope: FactScope;
    if (sessionId !== undefined) {
      const summary = await requireSession(store, sessionId);
      scope = summary.owner ? { owner: summary.owner } : { sessionId };
    } else {
      requireOwners(store);
      scope = { owner: owner! };
    }
    const { listed, more, counted: exact } = await readFacts(store, scope, [...status], limit);
    if (out.json) {
      // Times in JSON are ISO-8601, as in every command's output.
      const shown = listed.map((fact) => ({
        ...fact,
        observedAt: new Date(fact.observedAt).toISOString(),
        createdAt: new Date(fact.createdAt).toISOString(),
      }));
      return out.result({ scope, status, facts: shown, more, moreCounted: exact });
    }
    const whose =
      "owner" in scope
        ? `owner ${scope.owner}${sessionId === undefined ? "" : ` (the owner of session ${sessionId})`}`
        : `session ${scope.sessionId}`;
    const kind = status.length === 1 ? "current fact" : "fact";
    if (listed.length === 0) return out.line(`No ${kind}s of ${whose}.`);
    await out.line(`Facts of ${whose}, newest first${status.length === 1 ? " (current only)" : ""}:`);
    for (const fact of listed) {
      await out.line();
      await out.line(factHeader(fact));
      await out.line(`  ${fact.text}`);
      await out.line(`  sources: ${fact.sources.map((s) => `${s.sessionId}/${s.messageId}`).join(", ")}`);
    }
    if (more > 0) {
      await out.line();
      const noun = more === 1 && exact ? kind : `${kind}s`;
      await out.line(
        `… ${more}${exact ? "" : "+"} more ${noun} not shown (raise --limit, at most ${MAX_LIMIT})`,
      );
    }
  },
};

// `[observed] status about X  id … by producer`, and what replaced a superseded fact.
function factHeader(fact: Fact): string {
  const observed = shortTime(new Date(fact.observedAt).toISOString());
  const about = fact.about === null ? "" : `  about ${fact.about}`;
  const replaced = fact.supersededBy === null ? "" : ` by ${fact.supersededBy}`;
  return `[${observed}] ${fact.status}${replaced}${about}  id ${fact.id}  (${fact.producer})`;
}

/**
 * The scope's newest `limit` facts, and how many follow them: counted by pages up to {@link COUNTED_MORE}
 * (`counted` false past that), so a large scope costs a bounded read.
 */
async function readFacts(
  store: FactCapableStore,
  scope: FactScope,
  status: FactStatus[],
  limit: number,
): Promise<{ listed: Fact[]; more: number; counted: boolean }> {
  const listed: Fact[] = [];
  let more = 0;
  let cursor: string | null = null;
  do {
    const page = await store.facts.list(scope, { status, limit: PAGE, cursor });
    const room = limit - listed.length;
    listed.push(...page.facts.slice(0, Math.max(0, room)));
    more += Math.max(0, page.facts.length - Math.max(0, room));
    cursor = page.next;
  } while (cursor !== null && more < COUNTED_MORE);
  return { listed, more: Math.min(more, COUNTED_MORE), counted: cursor === null };
}
