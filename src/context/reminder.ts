import { renderBlock, SEPARATOR } from "./render.js";
import type { ContextBlock } from "./types.js";

/** The note a reminder opens with: the values below replace the prompt's copies (the reference's wording). */
export const REMINDER_PREAMBLE =
  "These context blocks changed after the system prompt was written. " +
  "Their current values below replace the ones in the system prompt.";

/**
 * True when `prompt` holds the block's section exactly as it renders now. Sections are joined by a blank line and
 * each opens with a border, so padding the prompt with a blank line in front and a border behind pins both ends
 * of the section in one containment test: content that only grew or shrank at an edge does not pass for
 * unchanged, and an empty block cannot be matched by another label's section that merely starts alike.
 * (Content cannot fake a border or header line: `neutralizeContent` sees to that.)
 */
export function promptRendersBlock(prompt: string, block: ContextBlock): boolean {
  const padded = `\n\n${prompt}\n\n${SEPARATOR}\n`;
  return padded.includes(`\n\n${renderBlock(block)}\n\n${SEPARATOR}\n`);
}

/** The reminder text for changed blocks: the preamble, then each block's current section; null when none. */
export function renderReminder(changed: readonly ContextBlock[]): string | null {
  if (changed.length === 0) return null;
  return [REMINDER_PREAMBLE, ...changed.map(renderBlock)].join("\n\n");
}
