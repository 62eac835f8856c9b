import { z } from "zod";
import { clipHit } from "../context/output.js";
import {
  type Fact,
  type FactScope,
  type FactStatus,
  type FactStore,
  hasFactStore,
} from "../contract/facts.js";
import { SessionError } from "../errors.js";
import { parseOwner } from "../store/owner.js";
import { boundedBlocks } from "./render.js";
import type { McpTool, ToolContext } from "./tool.js";
import { refused } from "./tool.js";

/** Most facts one `list_facts` page holds (the fact store's page). */
export const MAX_LIST_FACTS = 100;
/** The facts past a page counted at most (ten store pages): beyond, the marker says "1000+". */
const COUNTED_MORE = 1000;
/** Sources shown per fact: a fact may have 64, each naming a session and a message. */
const SHOWN_SOURCES = 8;

const scopeFields = {
  session: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The facts kept to this session alone (default: the owner's facts, learned from all their sessions)",
    ),
  owner: z
    .string()
    .min(1)
    .optional()
    .describe("The owner whose facts (a server serving one owner answers only for that owner)"),
};

function factsOf(context: ToolContext): FactStore {
  const { store } = context;
  if (!hasFactStore(store))
    throw new SessionError("UNSUPPORTED", `the ${store.backend} store keeps no facts`);
  return store.facts;
}

/**
 * The fact scope a call names, within the server's: a reachable session's own facts (`session`), or an owner's
 * (the server's owner; unscoped, the `owner` named). An owner-scoped server never names another owner's scope, and
 * a session outside it is "not found" as in every tool.
 */
async function factScope(
  args: { session?: string | undefined; owner?: string | undefined },
  context: ToolContext,
) {
  const { scope } = context;
  if (args.session !== undefined && args.owner !== undefined) {
    throw refused("name a session or an owner, not both", "owner");
  }
  if (args.session !== undefined) {
    await scope.require(args.session);
    return { sessionId: args.session } satisfies FactScope;
  }
  if (args.owner !== undefined) {
    const owner = parseOwner(args.owner);
    if (scope.owner !== undefined && owner !== scope.owner) {
      throw refused(`this server serves the facts of one owner only; leave owner out`, "owner");
    }
    return { owner } satisfies FactScope;
  }
  if (scope.owner === undefined) {
    throw refused(
      "this server serves every owner: name an owner (or a session) whose facts to read",
      "owner",
    );
  }
  return { owner: scope.owner } satisfies FactScope;
}

function whose(scope: FactScope): string {
  return "owner" in scope
    ? `owner ${JSON.stringify(scope.owner)}`
    : `session ${JSON.stringify(scope.sessionId)}`;
}

/** What a fact shows: a stored fact, or a search's fact hit (which has no status: it is current). */
export type FactView = Pick<Fact, "id" | "text" | "about" | "observedAt" | "producer" | "sources"> &
  Partial<Pick<Fact, "status" | "supersededBy">>;

/**
 * One fact: a header (`lead`, then id, status, about, observed, producer), its text within `maxChars`, and its
 * sources (the turns to read with read_turns_around).
 */
export function factBlock(fact: FactView, maxChars: number, lead: readonly string[] = []): string {
  const header = [
    ...lead,
    `fact=${JSON.stringify(fact.id)}`,
    ...(fact.status === undefined ? [] : [`status=${fact.status}`]),
    ...(fact.supersededBy == null ? [] : [`superseded-by=${JSON.stringify(fact.supersededBy)}`]),
    ...(fact.about === null ? [] : [`about=${JSON.stringify(fact.about)}`]),
    `observed=${new Date(fact.observedAt).toISOString()}`,
    `producer=${JSON.stringify(fact.producer)}`,
  ].join(" ");
  const shown = fact.sources
    .slice(0, SHOWN_SOURCES)
    .map((s) => `session=${JSON.stringify(s.sessionId)} message=${JSON.stringify(s.messageId)}`);
  const rest = fact.sources.length - shown.length;
  const sources = `  sources: ${shown.join("; ")}${rest > 0 ? `; and ${rest} more` : ""}`;
  return [header, clipHit(fact.text, "", maxChars), sources].join("\n");
}

/** How many facts follow `cursor`, counted a store page at a time up to {@link COUNTED_MORE}. */
async function countAfter(
  facts: FactStore,
  scope: FactScope,
  status: FactStatus[],
  cursor: string | null,
): Promise<{ more: number; exact: boolean }> {
  let more = 0;
  while (cursor !== null && more < COUNTED_MORE) {
    const page = await facts.list(scope, { status, limit: MAX_LIST_FACTS, cursor });
    more += page.facts.length;
    cursor = page.next;
  }
  return { more: Math.min(more, COUNTED_MORE), exact: cursor === null };
}

const listSchema = z.object({
  ...scopeFields,
  status: z
    .array(z.enum(["current", "superseded", "invalidated"]))
    .min(1)
    .max(3)
    .optional()
    .describe('Which facts (default ["current"]); superseded and invalidated ones are the history'),
  limit: z.number().int().min(1).max(MAX_LIST_FACTS).optional().describe("Most facts (default 20)"),
  cursor: z.string().min(1).max(200).optional().describe("Where to go on (the previous result says)"),
});

/** `list_facts`: the facts learned for the server's owner (or a session), newest first, paged. */
export const listFactsTool: McpTool<typeof listSchema> = {
  name: "list_facts",
  title: "List learned facts",
  description:
    "Lists the facts learned from the stored conversations (who people are, preferences, plans, events), newest " +
    "first, each with the session and message ids it came from (read them with read_turns_around). Current facts " +
    "only unless status asks for the history. Page with cursor.",
  schema: listSchema,
  writes: false,
  async run(args, context) {
    const facts = factsOf(context);
    const scope = await factScope(args, context);
    const status: FactStatus[] = [...new Set<FactStatus>(args.status ?? ["current"])];
    const limit = args.limit ?? 20;
    const cursor = args.cursor ?? null;
    const page = await facts.list(scope, { status, limit, cursor });
    const kind = status.length === 1 && status[0] === "current" ? "current facts" : "facts";
    if (page.facts.length === 0) {
      return cursor === null
        ? `No ${kind} of ${whose(scope)}.`
        : `[end of list: no ${kind} past this cursor]`;
    }
    const blocks = page.facts.map((fact) => factBlock(fact, context.limits.maxHitChars));
    // The marker is worked out once the output limit has said how many facts fit.
    let shown = page.facts.length;
    const out = boundedBlocks(blocks, context.limits.maxOutputChars, (n) => {
      shown = n;
      return "";
    });
    const next =
      shown === page.facts.length
        ? page.next
        : (await facts.list(scope, { status, limit: shown, cursor })).next;
    const { more, exact } = await countAfter(facts, scope, status, next);
    if (next === null || more === 0) return out.trimEnd();
    const noun = more === 1 && exact ? kind.replace(/s$/, "") : kind;
    return `${out.trimEnd()}\n\n[${more}${exact ? "" : "+"} more ${noun} of ${whose(scope)}: call list_facts with cursor: ${JSON.stringify(next)} for the next]`;
  },
};

const forgetSchema = z.object({
  ...scopeFields,
  fact: z.string().min(1).max(200).describe("The fact's id (list_facts shows it)"),
});

/**
 * `forget_fact` (only with writes enabled): invalidates a current fact of the scope. It is no longer recalled or
 * shown, and stays in the history (`status: ["invalidated"]`) with its text; `delete_fact` removes it.
 */
export const forgetFactTool: McpTool<typeof forgetSchema> = {
  name: "forget_fact",
  title: "Forget a learned fact",
  description:
    "Withdraws a current fact (it is wrong, or no longer holds): it is no longer recalled or shown in the user's " +
    "profile, but it is not deleted: its text stays stored, in the history as invalidated. To remove the text " +
    "(the user asked to delete it) use delete_fact. The conversation it came from is not changed.",
  schema: forgetSchema,
  writes: true,
  async run(args, context) {
    const facts = factsOf(context);
    const scope = await factScope(args, context);
    if (await facts.invalidate(scope, args.fact)) {
      return `Forgot fact ${JSON.stringify(args.fact)} of ${whose(scope)}: it is invalidated (kept in the history, no longer recalled).`;
    }
    const fact = await facts.get(scope, args.fact);
    if (fact === null) {
      throw new SessionError("NOT_FOUND", `fact ${JSON.stringify(args.fact)} of ${whose(scope)} not found`);
    }
    throw new SessionError(
      "CONFLICT",
      `fact ${JSON.stringify(args.fact)} of ${whose(scope)} is ${fact.status}, not current: nothing changed`,
    );
  },
};

/**
 * `delete_fact` (only with writes enabled): deletes a fact of the scope whatever its status, its text with it, where
 * `forget_fact` keeps it in the history.
 */
export const deleteFactTool: McpTool<typeof forgetSchema> = {
  name: "delete_fact",
  title: "Delete a learned fact",
  description:
    "Deletes a fact (current or in the history) so its text is no longer stored: not recalled, not shown, not in " +
    "the history (forget_fact only withdraws it and keeps the text). The conversation it came from is not changed: " +
    "the fact may be learned again from it.",
  schema: forgetSchema,
  writes: true,
  async run(args, context) {
    const facts = factsOf(context);
    const scope = await factScope(args, context);
    if (!(await facts.delete(scope, args.fact))) {
      throw new SessionError("NOT_FOUND", `fact ${JSON.stringify(args.fact)} of ${whose(scope)} not found`);
    }
    return `Deleted fact ${JSON.stringify(args.fact)} of ${whose(scope)}: its text is no longer stored.`;
  },
};
