import { z } from "zod";
import { hasSessionRegistry, type SessionInfo } from "../contract/registry.js";
import { SessionError } from "../errors.js";
import { boundedBlocks } from "./render.js";
import type { McpTool } from "./tool.js";

/** Most sessions one `list_sessions` page holds. */
export const MAX_LIST_SESSIONS = 100;

const schema = z.object({
  offset: z.number().int().min(0).optional().describe("Sessions to skip first (default 0)"),
  limit: z.number().int().min(1).max(MAX_LIST_SESSIONS).optional().describe("Most sessions (default 20)"),
});

function sessionLine(info: SessionInfo): string {
  const fields = [
    `session=${JSON.stringify(info.id)}`,
    // A name sealed for an owner whose key this store lacks is said so, not shown as "".
    info.nameSealed ? "name=(sealed)" : `name=${JSON.stringify(info.name)}`,
    `updated=${info.updated_at}`,
    `created=${info.created_at}`,
    ...(info.parent_session_id ? [`parent=${JSON.stringify(info.parent_session_id)}`] : []),
    ...(info.end_reason ? [`ended=${info.end_reason}`] : []),
  ];
  return fields.join(" ");
}

/** `list_sessions`: the registered sessions within the scope, newest activity first, paged. */
export const listSessionsTool: McpTool<typeof schema> = {
  name: "list_sessions",
  title: "List conversations",
  description:
    "Lists the stored conversations, newest activity first, with their ids and names. Page with offset.",
  schema,
  writes: false,
  async run(args, { store, scope, limits }) {
    if (!hasSessionRegistry(store)) {
      throw new SessionError("UNSUPPORTED", `the ${store.backend} store keeps no list of sessions`);
    }
    const offset = args.offset ?? 0;
    const limit = args.limit ?? 20;
    // One row past the page tells whether there is more.
    const rows = await store.registry.list({
      offset,
      limit: limit + 1,
      ...(scope.owner === undefined ? {} : { owner: scope.owner }),
    });
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    if (page.length === 0)
      return offset === 0 ? "No sessions." : `[end of list: offset ${offset} is past it]`;
    return boundedBlocks(page.map(sessionLine), limits.maxOutputChars, (shown) =>
      shown === page.length && !more
        ? null
        : `[more: sessions ${offset + 1}–${offset + shown} shown; call list_sessions with offset: ${offset + shown} for the next]`,
    );
  },
};
