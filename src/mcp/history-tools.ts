import { z } from "zod";
import type { SessionMessage } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { historyBatchesOf } from "../session/history.js";
import { boundedBlocks, messageBlock } from "./render.js";
import type { McpTool } from "./tool.js";

/** Most messages one `read_session` page holds. */
export const MAX_PAGE_MESSAGES = 100;
/** Most turns `read_turns_around` shows on each side of a message. */
export const MAX_AROUND_TURNS = 10;

const sessionId = z.string().min(1).describe("The session's id (from list_sessions or a search hit)");

const readSchema = z.object({
  session: sessionId,
  leaf: z
    .string()
    .min(1)
    .optional()
    .describe("Read the branch ending at this message (default: the latest one)"),
  offset: z.number().int().min(0).optional().describe("Messages to skip first (default 0)"),
  limit: z.number().int().min(1).max(MAX_PAGE_MESSAGES).optional().describe("Most messages (default 20)"),
  newest_first: z.boolean().optional().describe("Page from the newest message back (default: oldest first)"),
});

function messageNotFound(session: string, id: string): SessionError {
  return new SessionError(
    "NOT_FOUND",
    `message ${JSON.stringify(id)} is not in session ${JSON.stringify(session)}`,
  );
}

/** `read_session`: one branch of a session as the model reads it (summaries in place of compacted ranges), paged. */
export const readSessionTool: McpTool<typeof readSchema> = {
  name: "read_session",
  title: "Read a conversation",
  description:
    "Reads one branch of a session in pages, as the model of that conversation read it (a compacted range shows " +
    "as its summary). Oldest first by default; newest_first pages back from the end. The result says how to " +
    "read the next page.",
  schema: readSchema,
  writes: false,
  async run(args, { store, scope, limits }) {
    await scope.require(args.session);
    const provider = store.session(args.session);
    if (args.leaf !== undefined && (await provider.getMessage(args.leaf)) === null) {
      throw messageNotFound(args.session, args.leaf);
    }
    const offset = args.offset ?? 0;
    const limit = args.limit ?? 20;
    // Reads stop one message past the page, which tells whether there is more: the cost is offset + limit rows.
    const wanted = offset + limit + 1;
    const page: SessionMessage[] = [];
    let seen = 0;
    const batches = historyBatchesOf(provider, {
      leafId: args.leaf ?? null,
      newestFirst: args.newest_first === true,
      batchSize: Math.min(wanted, 100),
    });
    read: for await (const batch of batches) {
      for (const message of batch) {
        if (seen >= offset) page.push(message);
        if (++seen >= wanted) break read;
      }
    }
    const more = page.length > limit;
    if (more) page.pop();
    if (page.length === 0) {
      return offset === 0
        ? `Session ${JSON.stringify(args.session)} holds no messages.`
        : `[end of session: offset ${offset} is past its ${seen} messages]`;
    }
    const blocks = page.map((message) => messageBlock(message, limits.maxHitChars));
    return boundedBlocks(blocks, limits.maxOutputChars, (shown) => {
      const next = offset + shown;
      if (shown === page.length && !more) return `[end of session: messages ${offset + 1}–${next} shown]`;
      return (
        `[more: messages ${offset + 1}–${next} shown; call read_session again with offset: ${next}` +
        `${args.newest_first ? " and newest_first: true" : ""} for the next page]`
      );
    });
  },
};

const aroundSchema = z.object({
  session: sessionId,
  message: z.string().min(1).describe("The message id (a search hit's message=…)"),
  before: z.number().int().min(0).max(MAX_AROUND_TURNS).optional().describe("Turns before it (default 3)"),
  after: z.number().int().min(0).max(MAX_AROUND_TURNS).optional().describe("Turns after it (default 3)"),
});

/** `read_turns_around`: a message with the turns before it (its ancestors) and after it (the newest replies). */
export const readAroundTool: McpTool<typeof aroundSchema> = {
  name: "read_turns_around",
  title: "Read the turns around a message",
  description:
    "Shows a message (marked >) with the turns before it on its branch and the turns after it, following the " +
    "newest reply at each step (where a message has several replies, the result says so).",
  schema: aroundSchema,
  writes: false,
  async run(args, { store, scope, limits }) {
    await scope.require(args.session);
    const provider = store.session(args.session);
    const target = await provider.getMessage(args.message);
    if (target === null) throw messageNotFound(args.session, args.message);
    const before = args.before ?? 3;
    const after = args.after ?? 3;
    // The newest rows of the path to the message: the message itself and its `before` ancestors, nothing older.
    const path: SessionMessage[] = [];
    for await (const batch of historyBatchesOf(provider, {
      leafId: args.message,
      newestFirst: true,
      batchSize: before + 1,
    })) {
      path.push(...batch.slice(0, before + 1 - path.length));
      if (path.length > before) break;
    }
    path.reverse();
    const blocks = path.map((message) =>
      messageBlock(message, limits.maxHitChars, message.id === args.message ? "> " : ""),
    );
    // A summary may stand for the message on its own path: then the message itself is shown after the path.
    if (path.at(-1)?.id !== args.message) blocks.push(messageBlock(target, limits.maxHitChars, "> "));
    let at = args.message;
    for (let i = 0; i < after; i++) {
      const replies = await provider.getBranches(at);
      const newest = replies.at(-1);
      if (newest === undefined) break;
      const note = replies.length > 1 ? ` (the newest of ${replies.length} replies)` : "";
      blocks.push(messageBlock(newest, limits.maxHitChars, "", note));
      at = newest.id;
    }
    return boundedBlocks(blocks, limits.maxOutputChars, (shown) =>
      shown === blocks.length ? null : `[output truncated: ${shown} of ${blocks.length} turns shown]`,
    );
  },
};
