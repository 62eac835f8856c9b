import type { z } from "zod";
import type { ToolOutputLimits } from "../context/output.js";
import { clipOutput } from "../context/output.js";
import type { SessionStore } from "../contract/store.js";
import { errorMessage, SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import type { SessionScope } from "./scope.js";

/** How much the MCP tools may return and accept (see {@link DEFAULT_MCP_LIMITS}). */
export interface McpLimits extends ToolOutputLimits {
  /** Most characters `write_block` stores in one block; a longer content is refused, never cut. */
  maxBlockChars: number;
}

/** What every tool runs with: the store, the owner scope and the limits. */
export interface ToolContext {
  store: SessionStore;
  scope: SessionScope;
  limits: McpLimits;
}

/** One MCP tool: its schema (advertised as JSON Schema and parsed here), whether it writes, and what it does. */
export interface McpTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  schema: S;
  /** True for a tool that changes the store: offered only when writes are enabled. */
  writes: boolean;
  run(args: z.output<S>, context: ToolContext): Promise<string>;
}

/** A tool's result as MCP carries it: one text item, `isError` for a refusal. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: boolean;
}

/**
 * What a tool answers for `DECRYPT_FAILED`: the server was started without the keyring of an encrypted owner (or
 * with one that lacks its key), which whoever starts the server can fix and the model cannot.
 */
export const KEY_NEEDED =
  "this store holds encrypted owners and this server cannot open their data: start it with their keyring " +
  "(agent-session mcp --keyring <module> or --master-key-file <file>; from code, open the store with its keyring)";

/**
 * Runs `tool` on the client's raw arguments. It never throws: bad arguments, an unknown session and a store
 * failure all come back as a tool error whose text is `Error: …` (the convention of every memory tool of the
 * library), within the output limit like any result.
 */
export async function callTool(tool: McpTool, raw: unknown, context: ToolContext): Promise<ToolResult> {
  let text: string;
  try {
    const args = parseInput(tool.schema, raw ?? {});
    text = clipOutput(await tool.run(args, context), context.limits.maxOutputChars);
  } catch (error) {
    // A SessionError is the refusal the caller can act on; anything else is a failure of the store, named as such.
    const message = !(error instanceof SessionError)
      ? `the store failed: ${errorMessage(error)}`
      : error.code === "DECRYPT_FAILED"
        ? `${KEY_NEEDED} (${error.message})`
        : error.message;
    return {
      content: [{ type: "text", text: clipOutput(`Error: ${message}`, context.limits.maxOutputChars) }],
      isError: true,
    };
  }
  return { content: [{ type: "text", text }] };
}

/** A refusal the model can read: `INVALID_ARGUMENT` with one issue naming the field. */
export function refused(message: string, path: string): SessionError {
  return new SessionError("INVALID_ARGUMENT", message, { issues: [{ path, rule: "format" }] });
}
