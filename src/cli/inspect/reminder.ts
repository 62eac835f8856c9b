import { promptRendersBlock } from "../../context/reminder.js";
import { renderBlock, SEPARATOR } from "../../context/render.js";
import type { ContextBlock } from "../../context/types.js";
import { estimateStringTokens } from "../../message/tokens.js";

// A header line: the label upper-cased, an optional description, an optional budget, exactly one tag.
const HEADER =
  /^(?: \((.*)\))?(?: \[\d+% — \d+\/(\d+) tokens\])? \[(searchable|loadable|readonly|writable)\]$/;

/** The header lines of a prompt: a line between two borders (content cannot draw a border, see neutralize.ts). */
function headers(prompt: string): string[] {
  const lines = prompt.split("\n");
  const found: string[] = [];
  for (let i = 1; i + 1 < lines.length; i++) {
    if (lines[i - 1] === SEPARATOR && lines[i + 1] === SEPARATOR) found.push(lines[i]!);
  }
  return found;
}

/** The block as the prompt's header for `label` describes it (description, budget, tag), or a plain writable one. */
function blockFromPrompt(prompt: string, label: string, content: string): ContextBlock {
  const upper = label.toUpperCase();
  const block: ContextBlock = {
    label,
    content,
    tokens: estimateStringTokens(content),
    writable: true,
    isSkill: false,
    isSearchable: false,
  };
  for (const header of headers(prompt)) {
    if (!header.startsWith(upper)) continue;
    const match = HEADER.exec(header.slice(upper.length));
    if (!match) continue;
    const [, description, maxTokens, tag] = match;
    if (description !== undefined) block.description = description;
    if (maxTokens !== undefined) block.maxTokens = Number(maxTokens);
    block.writable = tag !== "readonly";
    block.isSkill = tag === "loadable";
    block.isSearchable = tag === "searchable";
    // Another label may share the prefix ("env" and "env (old)"): the one whose section holds the value wins.
    if (promptRendersBlock(prompt, block)) return block;
  }
  return block;
}

/**
 * For a stored block, the section a `whenChanged: "remind"` block's reminder carries while the frozen prompt holds
 * another value (a "wait" block shows the value after `refreshSystemPrompt()` instead); null when the prompt holds
 * the stored value. The viewer knows the stored rows only, not the app's configuration, so it cannot tell the two.
 */
export function pendingReminder(prompt: string, label: string, content: string): string | null {
  const block = blockFromPrompt(prompt, label, content);
  return promptRendersBlock(prompt, block) ? null : renderBlock(block);
}
