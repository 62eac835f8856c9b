import { toolOutputLimits } from "../context/output.js";
import { hasSessionRegistry } from "../contract/registry.js";
import { isSessionStore, type SessionStore } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { wholeAtLeast } from "../schema/rules.js";
import { optionalOwner } from "../store/owner.js";
import type { McpLimits } from "./tool.js";

/** The defaults: the memory tools' output limits, and a block as large as a long memory document. */
export const DEFAULT_MCP_LIMITS: Readonly<McpLimits> = Object.freeze({
  maxHitChars: 8000,
  maxOutputChars: 32000,
  maxBlockChars: 64000,
});

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The store to serve (a SQLite, Postgres or memory store); or give `manager`. */
  store?: SessionStore | undefined;
  /** A `SessionManager` (or anything with its `store`), whose store is served. */
  manager?: { readonly store: SessionStore } | undefined;
  /**
   * Serve one owner's sessions only (registered with this owner, see docs/MANAGER.md, Owners): another owner's
   * session and an unregistered one are not found, and search covers this owner's sessions only.
   */
  owner?: string | undefined;
  /** Offer `write_block` (default false: every tool only reads). */
  writes?: boolean | undefined;
  /** Output and write bounds; an absent field keeps its default ({@link DEFAULT_MCP_LIMITS}). */
  limits?: Partial<McpLimits> | undefined;
  /** The server's name as clients show it (default "agent-session"). */
  name?: string | undefined;
}

/** The options checked once, when the server is made (a bad value is the app's error, so it throws there). */
export interface ResolvedOptions {
  store: SessionStore;
  owner: string | undefined;
  writes: boolean;
  limits: McpLimits;
  name: string;
}

const blockChars = wholeAtLeast(1, "limits.maxBlockChars").optional();

/** Checks {@link McpServerOptions}: exactly one of `store` and `manager`, a valid owner on a store that keeps owners. */
export function resolveOptions(options: McpServerOptions): ResolvedOptions {
  const given = options.store ?? options.manager?.store;
  // Hand-written: a clash between two settings (store and manager), each of which alone is fine.
  if ((options.store === undefined) === (options.manager === undefined) || !isSessionStore(given)) {
    throw new SessionError("INVALID_ARGUMENT", "createMcpServer needs exactly one of store and manager", {
      issues: [{ path: "store", rule: "required" }],
    });
  }
  const owner = optionalOwner(options.owner);
  if (owner !== undefined && !hasSessionRegistry(given)) {
    throw new SessionError(
      "UNSUPPORTED",
      `the ${given.backend} store keeps no owners: it has no session registry`,
    );
  }
  const { maxBlockChars, ...output } = options.limits ?? {};
  parseInput(blockChars, maxBlockChars, { path: "limits.maxBlockChars" });
  return {
    store: given,
    owner,
    writes: options.writes === true,
    limits: {
      ...toolOutputLimits(output, DEFAULT_MCP_LIMITS),
      maxBlockChars: maxBlockChars ?? DEFAULT_MCP_LIMITS.maxBlockChars,
    },
    name: options.name ?? "agent-session",
  };
}
