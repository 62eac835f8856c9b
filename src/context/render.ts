import { neutralizeContent } from "./neutralize.js";
import type { ContextBlock } from "./types.js";

/** The block border: U+2550 repeated 46 times, as the reference renders it. */
export const SEPARATOR = "═".repeat(46);

/** The header line of a block: label, description, token usage and exactly one capability tag. */
export function blockHeader(block: ContextBlock): string {
  let header = block.label.toUpperCase();
  if (block.description) header += ` (${block.description})`;
  if (block.maxTokens) {
    const percent = Math.round((block.tokens / block.maxTokens) * 100);
    header += ` [${percent}% — ${block.tokens}/${block.maxTokens} tokens]`;
  }
  const tag = block.isSearchable
    ? "searchable"
    : block.isSkill
      ? "loadable"
      : block.writable
        ? "writable"
        : "readonly";
  return `${header} [${tag}]`;
}

/**
 * Renders blocks in order as the reference does: border, header, border, content; blocks joined by one blank
 * line; empty read-only blocks omitted; no leading or trailing newline.
 */
export function renderSystemPrompt(blocks: readonly ContextBlock[]): string {
  const rendered: string[] = [];
  for (const block of blocks) {
    const plainReadonly = !block.writable && !block.isSkill && !block.isSearchable;
    if (plainReadonly && block.content.length === 0) continue;
    rendered.push(`${SEPARATOR}\n${blockHeader(block)}\n${SEPARATOR}\n${neutralizeContent(block.content)}`);
  }
  return rendered.join("\n\n");
}
