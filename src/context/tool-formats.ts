import { z } from "zod";
import { errorMessage, SessionError } from "../errors.js";
import { safeString } from "../message/serialize.js";
import { MIN_OUTPUT_CHARS } from "../schema/limits.js";
import { dropStrictNulls, type JsonSchema, toStrictSchema } from "./openai-strict.js";
import { clipOutput, DEFAULT_TOOL_OUTPUT_LIMITS } from "./output.js";
import { type SessionToolSet, toolSetLimits } from "./tools.js";

export type { JsonSchema } from "./openai-strict.js";

/** OpenAI Chat Completions function tool definition (`strict` when the schema allows it). */
export interface OpenAIToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean };
}

/** OpenAI Responses API function tool definition (flat, `strict` when the schema allows it). */
export interface OpenAIResponsesToolDefinition {
  type: "function";
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
}

/** The tool-definition formats `toolDefinitions(format)` renders. */
export type ToolFormat = "openai" | "openai-responses" | "anthropic";

/** A tool call as an SDK hands it over: Chat Completions (`function.arguments`) or Responses (`function_call`). */
export type OpenAIToolCall =
  | { function: { name: string; arguments: string } }
  | { type: "function_call"; name: string; arguments: string };

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

/** A schema for OpenAI: the strict form when strict mode can express it. */
function openAIParameters(schema: z.ZodType): { parameters: JsonSchema; strict: boolean } {
  const plain = jsonSchema(schema);
  const strict = toStrictSchema(plain);
  return strict ? { parameters: strict, strict: true } : { parameters: plain, strict: false };
}

/** The tools as function definitions for OpenAI Chat Completions (`tools` of `chat.completions.create`). */
export function toOpenAITools(tools: SessionToolSet): OpenAIToolDefinition[] {
  return Object.entries(tools).map(([name, tool]) => ({
    type: "function",
    function: { name, description: tool.description, ...openAIParameters(tool.inputSchema) },
  }));
}

/** The tools as function definitions for the OpenAI Responses API (`tools` of `responses.create`). */
export function toOpenAIResponsesTools(tools: SessionToolSet): OpenAIResponsesToolDefinition[] {
  return Object.entries(tools).map(([name, tool]) => ({
    type: "function",
    name,
    description: tool.description,
    ...openAIParameters(tool.inputSchema),
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

/** The name and arguments of an OpenAI tool call in either API's shape, or null when it is neither. */
export function readToolCall(call: unknown): { name: unknown; input: unknown } | null {
  if (typeof call !== "object" || call === null) return null;
  const { function: fn, type, name, arguments: args } = call as Record<string, unknown>;
  if (typeof fn === "object" && fn !== null) {
    const inner = fn as Record<string, unknown>;
    return { name: inner.name, input: inner.arguments };
  }
  return type === "function_call" ? { name, input: args } : null;
}

// Longest tool name echoed in an "unknown tool" message: enough to recognise a typo, never a pasted megabyte.
const MAX_ECHOED_NAME = 100;

/**
 * Executes a named tool call from any SDK; the input may be an object or a JSON string (OpenAI sends arguments as
 * a string), and `null`s that OpenAI's strict mode sends for omitted optional fields are dropped. Never throws:
 * unknown tools and unparsable input come back as `Error: …` strings, within the tools' `maxOutputChars`.
 */
export async function dispatchToolCall(tools: SessionToolSet, name: string, input: unknown): Promise<string> {
  const tool = typeof name === "string" && Object.hasOwn(tools, name) ? tools[name] : undefined;
  if (!tool) {
    const shown = safeString(name);
    const echoed = shown.length > MAX_ECHOED_NAME ? `${shown.slice(0, MAX_ECHOED_NAME)}…` : shown;
    const available = Object.keys(tools).join(", ") || "none";
    return clipOutput(`Error: unknown tool "${echoed}". Available tools: ${available}`, maxChars(tools));
  }
  let args = input;
  if (typeof input === "string") {
    try {
      args = JSON.parse(input);
    } catch {
      return "Error: invalid input: the arguments are not valid JSON";
    }
  }
  return tool.execute(dropStrictNulls(jsonSchema(tool.inputSchema), args));
}

/** The tools as definitions in `format` (`INVALID_ARGUMENT` for an unknown format). */
export function toolDefinitionsFor(
  tools: SessionToolSet,
  format: ToolFormat,
): OpenAIToolDefinition[] | OpenAIResponsesToolDefinition[] | AnthropicToolDefinition[] {
  if (format === "openai") return toOpenAITools(tools);
  if (format === "openai-responses") return toOpenAIResponsesTools(tools);
  if (format === "anthropic") return toAnthropicTools(tools);
  throw new SessionError(
    "INVALID_ARGUMENT",
    `Unknown tool format ${JSON.stringify(format)}: use "openai", "openai-responses" or "anthropic"`,
    { issues: [{ path: "format", rule: "one_of" }] },
  );
}

/**
 * Executes a tool call given as a name and input or as an OpenAI tool call as received; never throws (also when
 * loading the tools fails): every failure comes back as an `Error: …` string for the model.
 */
export async function executeToolCall(
  loadTools: () => Promise<SessionToolSet>,
  nameOrCall: string | OpenAIToolCall,
  input: unknown,
): Promise<string> {
  let tools: SessionToolSet | undefined;
  try {
    if (typeof nameOrCall === "string") {
      tools = await loadTools();
      return await dispatchToolCall(tools, nameOrCall, input);
    }
    const call = readToolCall(nameOrCall);
    if (!call) {
      return 'Error: invalid tool call: expected { function: { name, arguments } } or { type: "function_call", name, arguments }';
    }
    tools = await loadTools();
    return await dispatchToolCall(tools, call.name as string, call.input);
  } catch (error) {
    // Without loaded tools their limit is unknown: the smallest one any tool set may have still holds.
    return clipOutput(`Error: ${errorMessage(error)}`, tools ? maxChars(tools) : MIN_OUTPUT_CHARS);
  }
}

// The output bound of a tool set: its own when the library made it, else the default.
function maxChars(tools: SessionToolSet): number {
  return (toolSetLimits(tools) ?? DEFAULT_TOOL_OUTPUT_LIMITS).maxOutputChars;
}
