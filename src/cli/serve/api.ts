import { hasFactStore } from "../../contract/facts.js";
import type { SessionStore } from "../../contract/store.js";
import { CliError } from "../errors.js";
import { sessionBlocks } from "../inspect/blocks.js";
import { readHistory } from "../inspect/history.js";
import { listSessions, requireSession } from "../inspect/sessions.js";
import { activeIds, leafIds, loadTree } from "../inspect/tree.js";
import { preview } from "../output.js";
import { partText } from "../render/message.js";
import { viewerFacts } from "./facts-api.js";
import { ownerParam, wholeParam } from "./params.js";
import { viewerSearchOptions, withCompactions } from "./search-api.js";

/** Sessions `/api/sessions` lists unless its `limit` says otherwise. */
export const VIEWER_SESSIONS = 200;
/** Most sessions `/api/sessions` lists. */
export const MAX_VIEWER_SESSIONS = 1_000;

/** A JSON answer of the viewer's API, or an error with its HTTP status. */
export type ApiResult =
  | { status: 200; body: unknown }
  | { status: 400 | 403 | 404 | 405 | 500; body: { error: { code: string; message: string } } };

/** The viewer's read-only endpoints: every one is a GET with query parameters, answered as JSON. */
export type ApiRoute = (store: SessionStore, query: URLSearchParams) => Promise<unknown>;

function required(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null) throw new CliError(`the "${name}" parameter is required`, "INVALID_ARGUMENT");
  return value;
}

/**
 * The session `id` names, checked: unknown, or (with `owner`) another owner's or an unowned one, is `NOT_FOUND`
 * (404), so the page's `?owner=` holds on every per-session route as it does on the list.
 */
async function ownedSession(store: SessionStore, query: URLSearchParams) {
  const id = required(query, "id");
  return { id, summary: await requireSession(store, id, ownerParam(query)) };
}

/** The routes under `/api/`; each returns plain data that the page renders as text. */
export const API_ROUTES: Record<string, ApiRoute> = {
  // The sessions with the newest activity, `limit` of them (default 200): a store's whole list would cost a
  // footprint read per session. `more` says that others exist (`agent-session ls` lists them all). `owner`
  // keeps the list to that owner's sessions.
  async sessions(store, query) {
    const limit = wholeParam(query, "limit", 1, MAX_VIEWER_SESSIONS) ?? VIEWER_SESSIONS;
    const sessions = await listSessions(store, limit + 1, ownerParam(query));
    // keepsFacts: the page says that a search of the whole store leaves the facts out.
    return {
      sessions: sessions.slice(0, limit),
      more: sessions.length > limit,
      keepsFacts: hasFactStore(store),
    };
  },

  // One session: its summary and its whole tree, as small nodes (the page draws the graph from them).
  async session(store, query) {
    const { id, summary } = await ownedSession(store, query);
    const tree = await loadTree(store, id);
    const active = activeIds(tree);
    const nodes = [...tree.nodes.values()].map((n) => ({
      id: n.id,
      parentId: n.parentId,
      role: n.role,
      createdAt: n.createdAt,
      preview: preview(n.text || (n.message?.parts ?? []).map(partText).join(" "), 90),
      children: n.children,
      onActivePath: active.has(n.id),
    }));
    return {
      summary,
      leafId: tree.leafId,
      leaves: leafIds(tree),
      roots: tree.roots,
      nodes,
      compactions: tree.compactions,
    };
  },

  async history(store, query) {
    const { id } = await ownedSession(store, query);
    const leaf = query.get("leaf");
    return readHistory(store, id, {
      leafId: leaf === null || leaf === "" ? undefined : leaf,
      raw: query.get("raw") === "1",
    });
  },

  async blocks(store, query) {
    const { id } = await ownedSession(store, query);
    return sessionBlocks(store, id);
  },

  // Ranked recall over every session (or one); hits a compaction covers carry the overlay's range. One session of
  // another owner than `owner` is NOT_FOUND, as on the other per-session routes, not an empty answer.
  async search(store, query) {
    const options = viewerSearchOptions(query);
    if (options.sessionId !== undefined && options.owner !== undefined) {
      await requireSession(store, options.sessionId, options.owner);
    }
    const hits = await store.searchMessages(query.get("q") ?? "", options);
    return withCompactions(hits, (id) => store.session(id).getCompactions());
  },

  // A session's facts (`id`: its own, then its owner's with a source in it) or an owner's (`owner` alone), a page
  // at a time with a cursor; `status` (repeatable) picks current, superseded, invalidated (facts-api.ts).
  facts: viewerFacts,
};

const STATUS: Record<string, 400 | 403 | 404> = {
  NOT_FOUND: 404,
  INVALID_ARGUMENT: 400,
  USAGE: 400,
  DECRYPT_FAILED: 403,
};

/** The viewer's word for `DECRYPT_FAILED`: whoever started it can give the keyring; the page cannot. */
const VIEWER_KEY_NEEDED =
  "this store holds encrypted owners: restart agent-session serve with --keyring or --master-key-file";

/** Runs a route and turns its errors into JSON with a status (details of unexpected errors stay on the server). */
export async function callApi(
  route: ApiRoute,
  store: SessionStore,
  query: URLSearchParams,
): Promise<ApiResult> {
  try {
    return { status: 200, body: await route(store, query) };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const status = typeof code === "string" ? STATUS[code] : undefined;
    if (status) {
      const { message } = error as Error;
      const shown = code === "DECRYPT_FAILED" ? `${VIEWER_KEY_NEEDED} (${message})` : message;
      return { status, body: { error: { code: String(code), message: shown } } };
    }
    return {
      status: 500,
      body: { error: { code: "INTERNAL", message: (error as Error).message ?? "internal error" } },
    };
  }
}
