/**
 * The input of Anthropic's memory tool (`memory_20250818`), typed here so that nothing depends on
 * `@ai-sdk/anthropic` or `@anthropic-ai/sdk` at run time, and checked before anything is read: a model's input is
 * untrusted, so a wrong field is an error string, never a throw, and no text longer than a file may be echoed.
 */
import { utf8Length } from "../../runtime/bytes.js";
import type { MemoryToolLimits } from "./directory.js";
import { checkPath } from "./paths.js";

/** One command of the memory tool, as the model sends it (the shapes of the AI SDK's and Anthropic's SDK). */
export type MemoryToolCommand =
  // `| undefined`: an execute typed with this accepts what a schema library infers for the optional range.
  | { command: "view"; path: string; view_range?: [number, number] | undefined }
  | { command: "create"; path: string; file_text: string }
  | { command: "str_replace"; path: string; old_str: string; new_str: string }
  | { command: "insert"; path: string; insert_line: number; insert_text: string }
  | { command: "delete"; path: string }
  | { command: "rename"; old_path: string; new_path: string };

/** The checked command (paths canonical), or the error string for the model. */
export type InputCheck = { ok: true; command: MemoryToolCommand } | { ok: false; error: string };

const COMMANDS = ["view", "create", "str_replace", "insert", "delete", "rename"];

/**
 * Checks the model's input against the command's shape, the path rules and the text sizes. Hand-written: a model
 * tool answers a refusal as an `Error: …` string it can act on, never a thrown `SessionError`.
 */
export function checkInput(input: unknown, limits: MemoryToolLimits): InputCheck {
  if (typeof input !== "object" || input === null) return fail("Error: The input must be an object");
  const fields = input as Record<string, unknown>;
  const command = fields.command;
  if (typeof command !== "string" || !COMMANDS.includes(command)) {
    return fail(`Error: Unknown command; use one of ${COMMANDS.join(", ")}`);
  }
  for (const field of ["file_text", "old_str", "new_str", "insert_text"]) {
    const value = fields[field];
    if (value === undefined) continue;
    if (typeof value !== "string") return fail(`Error: \`${field}\` must be a string`);
    const bytes = utf8Length(value);
    if (bytes > limits.maxFileBytes) {
      return fail(
        `Error: \`${field}\` is ${bytes} bytes; a memory file may have at most ${limits.maxFileBytes}`,
      );
    }
  }
  if (command === "rename") {
    const from = checkPath(fields.old_path, "old_path", limits.maxPathBytes);
    if (!from.ok) return from;
    const to = checkPath(fields.new_path, "new_path", limits.maxPathBytes);
    if (!to.ok) return to;
    return { ok: true, command: { command, old_path: from.path, new_path: to.path } };
  }
  const checked = checkPath(fields.path, "path", limits.maxPathBytes);
  if (!checked.ok) return checked;
  const path = checked.path;
  switch (command) {
    case "view":
      return view(path, fields.view_range);
    case "create":
      return typeof fields.file_text === "string"
        ? { ok: true, command: { command, path, file_text: fields.file_text } }
        : fail("Error: `file_text` must be a string");
    case "str_replace":
      if (typeof fields.old_str !== "string") return fail("Error: `old_str` must be a string");
      // The AI SDK's schema requires new_str; Anthropic's model may leave it out to delete the text.
      return {
        ok: true,
        command: {
          command,
          path,
          old_str: fields.old_str,
          new_str: (fields.new_str as string | undefined) ?? "",
        },
      };
    case "insert":
      if (typeof fields.insert_text !== "string") return fail("Error: `insert_text` must be a string");
      if (!Number.isSafeInteger(fields.insert_line)) {
        return fail("Error: `insert_line` must be a whole number");
      }
      return {
        ok: true,
        command: {
          command,
          path,
          insert_line: fields.insert_line as number,
          insert_text: fields.insert_text,
        },
      };
    default:
      return { ok: true, command: { command: "delete", path } };
  }
}

function view(path: string, range: unknown): InputCheck {
  if (range === undefined || range === null) return { ok: true, command: { command: "view", path } };
  if (
    !Array.isArray(range) ||
    range.length !== 2 ||
    !range.every((n) => Number.isSafeInteger(n)) ||
    (range[0] as number) < 1 ||
    ((range[1] as number) !== -1 && (range[1] as number) < (range[0] as number))
  ) {
    return fail(
      "Error: `view_range` must be two whole numbers [start, end]: start at least 1, end at least start or -1 " +
        "for the end of the file",
    );
  }
  return {
    ok: true,
    command: { command: "view", path, view_range: [range[0], range[1]] as [number, number] },
  };
}

function fail(error: string): InputCheck {
  return { ok: false, error };
}
