import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import { SessionError } from "../errors.js";
import { describe } from "./describe.js";
import { assertId } from "./ids.js";

/** Most tool names one `getToolMessages` call takes (each is one text test per path row). */
export const MAX_TOOL_NAMES = 16;

/** True when the part is a call of the tool `name`. */
export function isToolNamed(part: SessionMessagePart, name: string): boolean {
  // AI SDK v5+ static tools carry the name in the type (`tool-load_context`); dynamic and legacy parts in toolName.
  return part.type === `tool-${name}` || part.toolName === name;
}

/** True when one of the message's parts is a call of one of the tools `names`. */
export function carriesTool(message: SessionMessage, names: readonly string[]): boolean {
  return message.parts.some(
    (part) => typeof part === "object" && part !== null && names.some((name) => isToolNamed(part, name)),
  );
}

/**
 * Checks the tool names of a `getToolMessages` call: an array of 1 to {@link MAX_TOOL_NAMES} ids (non-empty,
 * well-formed strings); `INVALID_ARGUMENT` otherwise. Returns them without duplicates.
 */
export function toolNamesArg(names: unknown): string[] {
  if (!Array.isArray(names) || names.length === 0 || names.length > MAX_TOOL_NAMES) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `toolNames must be an array of 1 to ${MAX_TOOL_NAMES} tool names, got ${describe(names)}`,
      { issues: [{ path: "toolNames", rule: Array.isArray(names) ? "range" : "type" }] },
    );
  }
  for (const [index, name] of names.entries()) assertId(name, "A tool name", `toolNames.${index}`);
  return [...new Set(names as string[])];
}

/**
 * The two escapes (`\u`, `\/`) with which JSON written elsewhere (a transfer file) could spell a character of a tool
 * name: a row holding neither holds each name as JSON writes it.
 */
export const NAME_ESCAPES: readonly string[] = ["\\u", "\\/"];

/**
 * Each name as JSON writes it (`"tool-<name>"` and `"toolName":"<name>"` both hold it), leaving out one that holds
 * another (`unload_context` holds `load_context`): a row without any of them and without {@link NAME_ESCAPES} calls
 * none of the tools.
 */
export function nameNeedles(names: readonly string[]): string[] {
  const encoded = [...new Set(names.map((name) => JSON.stringify(name).slice(1, -1)))];
  return encoded.filter((needle) => !encoded.some((other) => other !== needle && needle.includes(other)));
}

/** Texts whose absence from a row's JSON proves no part of it calls one of the tools; backends test them first. */
export function toolNeedles(names: readonly string[]): string[] {
  return [...nameNeedles(names), ...NAME_ESCAPES];
}

/** True when the stored JSON holds one of the needles (see {@link toolNeedles}). */
export function mayCarryTool(json: string, needles: readonly string[]): boolean {
  return needles.some((needle) => json.includes(needle));
}
