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

/** One block's section of the prompt: border, header, border, content (neutralised). */
export function renderBlock(block: ContextBlock): string {
  return `${SEPARATOR}\n${blockHeader(block)}\n${SEPARATOR}\n${neutralizeContent(block.content)}`;
}

/**
 * True when the block has a section in the prompt. Empty plain read-only blocks are left out; writable, skill and
 * search blocks always render so the model knows the tools can address them, and remind blocks always render so a
 * later value has a copy to replace (and an empty one can be matched exactly, see `promptRendersBlock`).
 */
export function rendersInPrompt(block: ContextBlock): boolean {
  const plainReadonly = !block.writable && !block.isSkill && !block.isSearchable;
  return !plainReadonly || block.content.length > 0 || block.whenChanged === "remind";
}

/**
 * Renders blocks in order as the reference does: border, header, border, content; blocks joined by one blank
 * line; empty read-only blocks omitted (unless `whenChanged: "remind"`); no leading or trailing newline.
 */
export function renderSystemPrompt(blocks: readonly ContextBlock[]): string {
  return blocks.filter(rendersInPrompt).map(renderBlock).join("\n\n");
}
