import { z } from "zod";
import { blockKey } from "../context/block-keys.js";
import { blockLabel } from "../context/options-schema.js";
import { documentPart } from "../context/output.js";
import { hasConditionalWrite, hasContextStorage } from "../contract/context.js";
import { SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { boundedBlocks } from "./render.js";
import type { McpTool, ToolContext } from "./tool.js";
import { refused } from "./tool.js";

/** The label of a session's frozen system prompt (`withCachedPrompt`): readable here, never written. */
const PROMPT_LABEL = "_system_prompt";

const label = z.string().min(1).max(200);

function blocksOf(context: ToolContext) {
  if (!hasContextStorage(context.store)) {
    throw new SessionError("UNSUPPORTED", `the ${context.store.backend} store keeps no context blocks`);
  }
  return context.store.blocks;
}

function notFound(session: string, name: string): SessionError {
  return new SessionError(
    "NOT_FOUND",
    `block ${JSON.stringify(name)} of session ${JSON.stringify(session)} not found`,
  );
}

const readSchema = z.object({
  session: z.string().min(1).describe("The session's id"),
  label: label.describe('The block\'s label, e.g. "memory"; "_system_prompt" is the frozen system prompt'),
  offset: z.number().int().min(0).optional().describe("Where to continue a long block (the result says)"),
});

/** `read_block`: one context block of a session (its memory, a soul, the frozen prompt), in parts when long. */
export const readBlockTool: McpTool<typeof readSchema> = {
  name: "read_block",
  title: "Read a context block",
  description:
    "Reads a context block stored for a session under a label (the memory a model wrote with set_context, " +
    'blocks an app stored, or "_system_prompt", the frozen system prompt). A long block comes in parts.',
  schema: readSchema,
  writes: false,
  async run(args, context) {
    const blocks = blocksOf(context);
    parseInput(z.object({ label: blockLabel }), { label: args.label });
    const key = await context.scope.blockKey(args.session, args.label);
    const content = key === null ? null : await blocks.getBlock(key);
    if (content === null) throw notFound(args.session, args.label);
    return documentPart(content, args.offset ?? 0, context.limits.maxOutputChars);
  },
};

const writeSchema = z.object({
  session: z.string().min(1).describe("The session's id"),
  label: label.describe('The block\'s label, e.g. "memory" (letters, digits, "-"; no "_")'),
  content: z.string().describe("The block's whole new content (it replaces the old)"),
});

/**
 * `write_block` (only with writes enabled): replaces a session's block. A label may not hold `_`: keys are
 * `<label>_<session>`, so such a label could name another session's block, and refusing it only sometimes would
 * tell a client which other sessions exist.
 */
export const writeBlockTool: McpTool<typeof writeSchema> = {
  name: "write_block",
  title: "Write a context block",
  description:
    "Replaces the content of a session's context block (creating it when new). A block the session's app " +
    "declares (withContext) reaches that session's model in its system prompt.",
  schema: writeSchema,
  writes: true,
  async run(args, context) {
    blocksOf(context);
    parseInput(z.object({ label: blockLabel }), { label: args.label });
    if (args.label.includes("_")) {
      throw refused(
        `label must not contain "_" (a block is stored as <label>_<session>), got ${JSON.stringify(args.label)}`,
        "label",
      );
    }
    const max = context.limits.maxBlockChars;
    if (args.content.length > max) {
      throw new SessionError(
        "TOO_LARGE",
        `content is ${args.content.length} characters, more than the ${max} a block may hold here; nothing was written`,
        { issues: [{ path: "content", rule: "range" }] },
      );
    }
    await writeOwnBlock(context, args.session, args.label, args.content);
    return `Stored block ${JSON.stringify(args.label)} of session ${JSON.stringify(args.session)} (${args.content.length} characters).`;
  },
};

/**
 * Writes block `label` of `session` as that session's: over its own recorded row, or as a new row recorded for it.
 * A row under the key that is not the session's (an owner's `profile_bob`, an unrecorded row, another session's) is
 * never written: `CONFLICT`, whatever the scope. On a store without records, only unscoped, by the suffix rule.
 */
async function writeOwnBlock(
  context: ToolContext,
  session: string,
  name: string,
  content: string,
): Promise<void> {
  const blocks = blocksOf(context);
  const { scope } = context;
  const own = await scope.blockKey(session, name);
  if (!scope.recorded) {
    if (scope.owner !== undefined) {
      throw new SessionError(
        "UNSUPPORTED",
        `the ${context.store.backend} store does not record whose blocks are, so none is written for an owner`,
      );
    }
    await blocks.setBlock(blockKey(name, session), content);
    return;
  }
  const record = { sessionId: session };
  if (own !== null) return blocks.setBlock(own, content, record);
  const key = blockKey(name, session);
  // Created only when absent, atomically where the store can: a row under the key stays whoever's it is.
  let created: boolean;
  if (hasConditionalWrite(blocks)) created = await blocks.setBlockIf(key, null, content, record);
  else {
    created = (await blocks.getBlock(key)) === null;
    if (created) await blocks.setBlock(key, content, record);
  }
  if (!created) {
    throw new SessionError(
      "CONFLICT",
      `block ${JSON.stringify(name)} cannot be stored for session ${JSON.stringify(session)}: its key holds a block that is not this session's`,
      { issues: [{ path: "label", rule: "conflict" }] },
    );
  }
}

const listSchema = z.object({ session: z.string().min(1).describe("The session's id") });

/** `list_blocks`: the labels of a session's stored blocks, with their sizes. */
export const listBlocksTool: McpTool<typeof listSchema> = {
  name: "list_blocks",
  title: "List a session's context blocks",
  description:
    "Lists the labels and sizes of the context blocks stored for a session; read one with read_block.",
  schema: listSchema,
  writes: false,
  async run(args, context) {
    const { scope, limits } = context;
    const blocks = blocksOf(context);
    const suffix = `_${args.session}`;
    const lines: string[] = [];
    for (const key of await scope.blockKeys(args.session)) {
      const content = await blocks.getBlock(key);
      if (content === null) continue; // removed meanwhile
      // A recorded key not of the `<label>_<session>` form (written under another name) is listed by its key.
      const name = key.endsWith(suffix) && key.length > suffix.length ? key.slice(0, -suffix.length) : key;
      const what = name === PROMPT_LABEL ? " (the frozen system prompt)" : "";
      lines.push(`label=${JSON.stringify(name)} characters=${content.length}${what}`);
    }
    if (lines.length === 0) return `Session ${JSON.stringify(args.session)} has no stored blocks.`;
    return boundedBlocks(lines, limits.maxOutputChars, (shown) =>
      shown === lines.length ? null : `[output truncated: ${shown} of ${lines.length} blocks listed]`,
    );
  },
};
