import { z } from "zod";
import { errorMessage } from "../errors.js";
import { entryKey } from "../store/entry-key.js";
import type { ContextBlocks } from "./blocks.js";
import { clipOutput, documentPart, type ToolOutputLimits } from "./output.js";
import { notFoundReply, type SkillTracker, unloadedReply } from "./skills.js";
import type { SearchProvider, SkillProvider } from "./types.js";

/** A tool as the AI SDK's `ToolSet` expects it: description, zod input schema, and an `execute` that never throws. */
export interface SessionTool {
  description: string;
  inputSchema: z.ZodType;
  execute(input: unknown, options?: unknown): Promise<string>;
}

/** Tools by name. */
export type SessionToolSet = Record<string, SessionTool>;

/** What the generated tools need from a session. */
export interface ToolHost {
  readonly blocks: ContextBlocks;
  readonly skills: SkillTracker;
  unloadSkill(label: string, key: string): Promise<boolean>;
  /** Throws once the session is closed: a tool set handed out before must not write afterwards. */
  assertOpen(): void;
}

type Input = Record<string, unknown>;

/**
 * Wraps a handler so any failure — bad input, provider error, anything thrown — becomes an `Error: …` string,
 * and no result (an error echoing a huge input included) exceeds `maxOutputChars`.
 */
function safe(
  host: ToolHost,
  limits: ToolOutputLimits,
  handler: (input: Input) => Promise<string>,
): SessionTool["execute"] {
  return async (input) => {
    let result: string;
    try {
      host.assertOpen();
      if (typeof input !== "object" || input === null || Array.isArray(input)) {
        return "Error: invalid input: expected an object";
      }
      result = await handler(input as Input);
    } catch (error) {
      result = `Error: ${errorMessage(error)}`;
    }
    return clipOutput(result, limits.maxOutputChars);
  };
}

function text(input: Input, field: string): string {
  const value = input[field];
  if (typeof value !== "string") throw new Error(`invalid input: "${field}" must be a string`);
  return value;
}

const enumOf = (labels: string[]) => z.enum(labels as [string, ...string[]]);

function setContextTool(host: ToolHost, writable: string[], limits: ToolOutputLimits): SessionTool {
  const blocks = host.blocks;
  const keyed = writable.filter((l) => blocks.labels((c) => c.isSkill || c.isSearchable).includes(l));
  const lines = writable.map((label) => {
    const block = blocks.get(label)!;
    const kind = block.isSkill
      ? "skill collection, keyed entries"
      : block.isSearchable
        ? "searchable, keyed entries"
        : "writable";
    return `- "${label}" (${kind}): ${block.description ?? "no description"}`;
  });
  let description = `Write to a context block. Available blocks:\n${lines.join("\n")}\nWrites are saved durably and appear in the system prompt of later conversations.`;
  if (keyed.length > 0) {
    description +=
      "\n\nFor keyed blocks (skills, searchable entries) pass metadata: { title, description }: the title becomes the entry's key, so writing the same title again updates that entry.";
  }
  const shape: Record<string, z.ZodType> = {
    label: enumOf(writable).describe("The block to write"),
    content: z.string().describe("The text to write"),
    action: z
      .enum(["replace", "append"])
      .optional()
      .describe("replace (default) or append; plain blocks only"),
  };
  if (keyed.length > 0) {
    shape.metadata = z
      .object({ title: z.string().optional(), description: z.string().optional() })
      .optional()
      .describe("Title and description of a keyed entry");
  }
  return {
    description,
    inputSchema: z.object(shape),
    execute: safe(host, limits, async (input) => {
      const label = text(input, "label");
      const content = text(input, "content");
      const block = blocks.get(label);
      if (!block) return `Error: block "${label}" not found`;
      if (!block.writable) return `Error: Block "${label}" is readonly`;
      if (block.isSkill || block.isSearchable) {
        const metadata = (
          typeof input.metadata === "object" && input.metadata !== null ? input.metadata : {}
        ) as Input;
        const title = typeof metadata.title === "string" ? metadata.title : undefined;
        const summary = typeof metadata.description === "string" ? metadata.description : title;
        const key = entryKey(content, title);
        await blocks.setKeyed(label, key, content, summary);
        return `Indexed "${key}" in ${label}.`;
      }
      // The schema's values only: a model's "Append" or "add" replacing the whole block would lose it. null is
      // the default too (strict OpenAI schemas send it for an optional field left out).
      const action = input.action ?? "replace";
      if (action !== "replace" && action !== "append") {
        return 'Error: invalid input: "action" must be "replace" or "append"';
      }
      const updated =
        action === "append" ? await blocks.append(label, content) : await blocks.replace(label, content);
      if (updated.maxTokens) {
        const percent = Math.round((updated.tokens / updated.maxTokens) * 100);
        return `Written to ${label}. Usage: ${percent}% (${updated.tokens}/${updated.maxTokens} tokens)`;
      }
      return `Written to ${label}. Usage: ${updated.tokens} tokens`;
    }),
  };
}

function skillLabelError(label: string, skills: string[]): string {
  return `Error: "${label}" is not a skill block. Skill blocks: ${skills.join(", ")}`;
}

function skillTools(host: ToolHost, skills: string[], limits: ToolOutputLimits): SessionToolSet {
  const schema = z.object({
    label: enumOf(skills).describe("The skill block"),
    key: z.string().describe("The skill's key, as listed in the system prompt"),
  });
  const loadSchema = schema.extend({
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Where to continue a long document (its truncation note gives the number); default 0"),
  });
  const loaded = [...host.skills.keys()];
  return {
    load_context: {
      description: `Load a document from a skill block (${skills.join(", ")}). The system prompt lists the available keys under each skill block; load one when it is relevant to the task.`,
      inputSchema: loadSchema,
      execute: safe(host, limits, async (input) => {
        const label = text(input, "label");
        const key = text(input, "key");
        const offset = input.offset ?? 0;
        if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0) {
          return 'Error: invalid input: "offset" must be a whole number >= 0';
        }
        if (!skills.includes(label) || !host.blocks.has(label)) return skillLabelError(label, skills);
        // Queued behind this skill's earlier calls (an unload in flight would forget the load otherwise).
        return host.skills.serialise(label, key, async () => {
          // The block may have been removed while this call waited.
          if (!host.blocks.has(label)) return skillLabelError(label, skills);
          const content = await (host.blocks.provider(label) as SkillProvider).load(key);
          if (content === null || content === undefined) return notFoundReply(key);
          host.skills.add(label, key);
          return documentPart(content, offset, limits.maxOutputChars);
        });
      }),
    },
    unload_context: {
      description: `Unload a previously loaded skill to free context space; it can be loaded again later. ${
        loaded.length > 0 ? `Currently loaded: ${loaded.join(", ")}.` : "No skills are currently loaded."
      }`,
      inputSchema: schema,
      execute: safe(host, limits, async (input) => {
        const label = text(input, "label");
        const key = text(input, "key");
        if (!skills.includes(label) || !host.blocks.has(label)) return skillLabelError(label, skills);
        if (!(await host.unloadSkill(label, key)))
          return `Skill "${key}" is not currently loaded in "${label}".`;
        return unloadedReply(label, key);
      }),
    },
  };
}

function searchTool(host: ToolHost, searchable: string[], limits: ToolOutputLimits): SessionTool {
  return {
    description: `Search a searchable context block. Only these blocks can be searched: ${searchable.join(", ")}.`,
    inputSchema: z.object({
      label: enumOf(searchable).describe("The searchable block"),
      query: z.string().describe("What to look for"),
    }),
    execute: safe(host, limits, async (input) => {
      const label = text(input, "label");
      const query = text(input, "query");
      if (!searchable.includes(label) || !host.blocks.has(label)) {
        return `Error: "${label}" is not searchable. Searchable blocks: ${searchable.join(", ")}`;
      }
      // Built-in providers cap each hit and the total themselves (hit-aware); `safe` caps any other provider.
      const result = await (host.blocks.provider(label) as SearchProvider).search(query, limits);
      return typeof result === "string" && result.length > 0 ? result : "No results found.";
    }),
  };
}

// The limits each generated tool set was made with, so `dispatchToolCall` bounds its own messages (an unknown tool
// named by a megabyte) to the same size; a WeakMap keeps the set a plain record of tools for the AI SDK.
const setLimits = new WeakMap<SessionToolSet, ToolOutputLimits>();

/** The output limits a tool set from {@link contextTools} was made with (undefined for any other set). */
export function toolSetLimits(tools: SessionToolSet): ToolOutputLimits | undefined {
  return setLimits.get(tools);
}

/**
 * The memory tools for the blocks present: set_context, load_context/unload_context, search_context; every
 * result within `limits`.
 */
export function contextTools(host: ToolHost, limits: ToolOutputLimits): SessionToolSet {
  const tools: SessionToolSet = {};
  setLimits.set(tools, limits);
  const writable = host.blocks.labels((c) => c.writable);
  const skills = host.blocks.labels((c) => c.isSkill);
  const searchable = host.blocks.labels((c) => c.isSearchable);
  if (writable.length > 0) tools.set_context = setContextTool(host, writable, limits);
  if (skills.length > 0) Object.assign(tools, skillTools(host, skills, limits));
  if (searchable.length > 0) tools.search_context = searchTool(host, searchable, limits);
  return tools;
}
