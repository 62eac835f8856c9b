/**
 * The profile block: the current facts of a Session's owner (and the session's own) rendered into the system prompt
 * as quoted data within a token budget, read-only (docs/FACTS.md, "Profile in the prompt").
 */

import { z } from "zod";
import type {
  BlockBinding,
  ContextProvider,
  SessionBoundProvider,
  SessionContextOptions,
  WhenChanged,
} from "../context/types.js";
import { type Fact, type FactCapableStore, type FactScope, hasFactStore } from "../contract/facts.js";
import { hasSessionRegistry } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { numberWhere } from "../schema/rules.js";
import { rule } from "../schema/to-session-error.js";
import { type ProfileFacts, renderProfile } from "./profile-render.js";

/** Options of {@link factsProfile}. */
export interface FactsProfileOptions {
  /** The block's token budget (the library's estimate), header included: default 1,000, from 128 to 32,000. */
  maxTokens?: number;
  /** The block's description in its prompt header. */
  description?: string;
  /** How a change after the freeze reaches the model: `"remind"` (default) or `"wait"` (at the next refresh). */
  whenChanged?: WhenChanged;
}

/** The default budget of the profile block, in estimated tokens. */
export const PROFILE_MAX_TOKENS = 1_000;
/** The smallest budget: the header and the closing lines must fit. */
export const PROFILE_MIN_TOKENS = 128;
/** The largest budget. */
export const PROFILE_LIMIT_TOKENS = 32_000;
/** Most facts read per scope (pages of 100, newest stored first); past it the left-out count is a lower bound. */
export const PROFILE_SCAN = 1_000;
const PAGE = 100;

/** The description the block's header shows by default. */
export const PROFILE_DESCRIPTION = "Facts observed in the user's conversations";

/** The block's token budget: the profile's own option, or the block's `maxTokens` when a Session binds it. */
const budget = numberWhere(
  `The profile's maxTokens must be a whole number from ${PROFILE_MIN_TOKENS} to ${PROFILE_LIMIT_TOKENS}`,
  (n) => Number.isInteger(n) && n >= PROFILE_MIN_TOKENS && n <= PROFILE_LIMIT_TOKENS,
);

const optionsSchema = z.looseObject(
  { maxTokens: budget.optional() },
  rule("factsProfile() takes an options object"),
);

/**
 * A read-only block of the facts known of the Session's user, for `withContext(label, factsProfile())` on a Session
 * or a SessionManager: the owner's current facts and the session's own, most recently observed first, within
 * `maxTokens`; a change reaches a frozen prompt through the reminder (`whenChanged: "remind"`, the default).
 */
export function factsProfile(options: FactsProfileOptions = {}): SessionContextOptions {
  const maxTokens = parseInput(optionsSchema, options).maxTokens ?? PROFILE_MAX_TOKENS;
  return {
    description: options.description ?? PROFILE_DESCRIPTION,
    maxTokens,
    whenChanged: options.whenChanged ?? "remind",
    provider: new FactsProfileTemplate(),
  };
}

/** The provider `factsProfile()` hands a block: each Session that opens the block binds its own reader. */
class FactsProfileTemplate implements SessionBoundProvider {
  async get(): Promise<string | null> {
    throw new SessionError(
      "UNSUPPORTED",
      "factsProfile() is read through a Session: add it with withContext() or addContext() on a Session or a SessionManager",
    );
  }

  forSession({ store, sessionId, label, maxTokens }: BlockBinding): ContextProvider {
    if (store === undefined || !hasFactStore(store)) {
      throw new SessionError(
        "UNSUPPORTED",
        `Block "${label}" (factsProfile) needs a Session on a store that keeps facts (memory, SQLite, Postgres)`,
      );
    }
    return new FactsProfileProvider(
      store,
      sessionId,
      parseInput(budget, maxTokens ?? PROFILE_MAX_TOKENS, { path: "maxTokens" }),
    );
  }
}

/** One Session's profile: its scopes read on every `get`, so a reminder sees a new fact at the next turn. */
export class FactsProfileProvider implements ContextProvider {
  constructor(
    private readonly store: FactCapableStore,
    private readonly sessionId: string,
    private readonly maxTokens: number,
  ) {}

  async get(): Promise<string | null> {
    const read: ProfileFacts[] = [];
    for (const scope of await this.scopes()) read.push(await readScope(this.store, scope));
    const facts = read.flatMap((r) => r.facts).sort(newestObserved);
    return renderProfile(
      { facts, unread: read.some((r) => r.unread), sealed: read.some((r) => r.sealed) },
      this.maxTokens,
    );
  }

  /** The owner's scope (when the session is registered to one), then the session's own (a named session's). */
  private async scopes(): Promise<FactScope[]> {
    if (this.sessionId === "") return [];
    const { store, sessionId } = this;
    const owner = hasSessionRegistry(store) ? (await store.registry.get(sessionId))?.owner : undefined;
    return owner === undefined ? [{ sessionId }] : [{ owner }, { sessionId }];
  }
}

/** A scope's current facts, newest stored first, at most {@link PROFILE_SCAN}; an encrypted scope is marked. */
async function readScope(store: FactCapableStore, scope: FactScope): Promise<ProfileFacts> {
  const facts: Fact[] = [];
  let cursor: string | null = null;
  try {
    do {
      const page = await store.facts.list(scope, { limit: PAGE, cursor });
      facts.push(...page.facts);
      cursor = page.next;
    } while (cursor !== null && facts.length < PROFILE_SCAN);
  } catch (error) {
    // An owner's facts a store without its key refuses: the prompt still renders, and says so.
    if (error instanceof SessionError && error.code === "DECRYPT_FAILED")
      return { facts: [], unread: false, sealed: true };
    throw error;
  }
  return { facts, unread: cursor !== null, sealed: false };
}

/**
 * The profile of `owner`'s own facts (no session's), rendered as the block renders it within `maxTokens`: for a
 * door that recalls an owner's facts without a Session bound to a block (agent-session/eve).
 */
export async function ownerProfile(
  store: FactCapableStore,
  owner: string,
  maxTokens: number,
): Promise<string> {
  const read = await readScope(store, { owner });
  return renderProfile({ ...read, facts: [...read.facts].sort(newestObserved) }, maxTokens);
}

/** Most recently observed first, then stored, the owner's before the session's, then by id: one order per set. */
function newestObserved(a: Fact, b: Fact): number {
  if (a.observedAt !== b.observedAt) return b.observedAt - a.observedAt;
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  if ((a.owner === null) !== (b.owner === null)) return a.owner === null ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
