import { z } from "zod";
import { safeString } from "../utils/serialize.js";
import type { SessionToolSet } from "./tools.js";

/** A JSON Schema object describing a tool's input. */
export type JsonSchema = Record<string, unknown>;

/** OpenAI Chat Completions / Responses function tool definition. */
export interface OpenAIToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
}

/** Anthropic Messages API tool definition. */
export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: JsonSchema;
}

function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as JsonSchema;
  return rest;
}

/** The tools as plain JSON-Schema function definitions for OpenAI's tool format. */
export function toOpenAITools(tools: SessionToolSet): OpenAIToolDefinition[] {
  return Object.entries(tools).map(([name, tool]) => ({
    type: "function",
    function: { name, description: tool.description, parameters: jsonSchema(tool.inputSchema) },
  }));
}

/** The tools as plain JSON-Schema definitions for Anthropic's tool format. */
export function toAnthropicTools(tools: SessionToolSet): AnthropicToolDefinition[] {
  return Object.entries(tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    input_schema: jsonSchema(tool.inputSchema),
  }));
}

/**
 * Executes a named tool call from any SDK; the input may be an object or a JSON string (OpenAI sends arguments as
 * a string). Never throws: unknown tools and unparsable input come back as `Error: …` strings.
 */
export async function dispatchToolCall(tools: SessionToolSet, name: string, input: unknown): Promise<string> {
  const tool = typeof name === "string" && Object.hasOwn(tools, name) ? tools[name] : undefined;
  if (!tool)
    return `Error: unknown tool "${safeString(name)}". Available tools: ${Object.keys(tools).join(", ") || "none"}`;
  let args = input;
  if (typeof input === "string") {
    try {
      args = JSON.parse(input);
    } catch {
      return "Error: invalid input: the arguments are not valid JSON";
    }
  }
  return tool.execute(args);
}
