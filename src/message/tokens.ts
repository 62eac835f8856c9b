import type { SessionMessage } from "../contract/message.js";
import { parsePointer, slotMediaType } from "./media.js";
import { MAYBE_MEDIA_JSON, safeJson } from "./serialize.js";

/** Approximate characters per token, the dense-content (JSON, code, URLs) side of the heuristic. */
export const CHARS_PER_TOKEN = 4;

/** Approximate tokens per whitespace-separated word, the prose side of the heuristic. */
export const WORDS_TOKEN_MULTIPLIER = 1.3;

/** Approximate per-message overhead in tokens (role and framing). */
export const TOKENS_PER_MESSAGE = 4;

/** Tokens an inline image counts for, whatever its size: about what a provider bills for a ~1.15-megapixel image. */
export const IMAGE_TOKENS = 1600;

/** Most tokens any other inline media payload (PDF, audio, …) counts for; below it, a token per 4 characters. */
export const MEDIA_TOKEN_CAP = 16_000;

/** Tokens of one media payload: images a fixed weight, the rest by size, capped. */
function mediaTokens(mediaType: string, chars: number): number {
  if (mediaType.startsWith("image/")) return IMAGE_TOKENS;
  return Math.min(MEDIA_TOKEN_CAP, Math.ceil(chars / CHARS_PER_TOKEN));
}

/** Media tokens of a string found under `key` in `holder`, or null when it is no media payload (see media.ts). */
function slotTokens(holder: unknown, key: string, value: string): number | null {
  const mediaType = slotMediaType(holder, key, value);
  if (mediaType === null) return null;
  // An offloaded payload's pointer estimates like the payload it stands for.
  return mediaTokens(mediaType, parsePointer(value)?.chars ?? value.length);
}

/**
 * True for the characters the regular expression `\s` matches (ECMAScript WhiteSpace and LineTerminator),
 * so the word count below agrees exactly with `text.split(/\s+/).filter(Boolean).length`.
 */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Number of non-empty pieces between whitespace runs, counted without allocating (estimates run on every append). */
function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    if (isWhitespace(text.charCodeAt(i))) {
      inWord = false;
    } else if (!inWord) {
      inWord = true;
      words++;
    }
  }
  return words;
}

/** Heuristic token count of a string: `ceil(max(length / 4, words × 1.3))`, 0 for an empty string. */
export function estimateStringTokens(text: string): number {
  // Typed callers always pass strings; anything else is estimated like a part value instead of throwing.
  if (typeof text !== "string") return estimateValueTokens(text);
  if (text.length === 0) return 0;
  const charEstimate = text.length / CHARS_PER_TOKEN;
  const wordEstimate = countWords(text) * WORDS_TOKEN_MULTIPLIER;
  return Math.ceil(Math.max(charEstimate, wordEstimate));
}

/**
 * Token estimate of a part field: strings as they are, other values by their JSON, null/undefined as 0. Media
 * payloads inside (a tool's image output) count as media, not as their base64 text.
 */
function estimateValueTokens(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === "string") return estimateStringTokens(value);
  const json = safeJson(value);
  if (json === undefined) return 0;
  if (!MAYBE_MEDIA_JSON.test(json)) return estimateStringTokens(json);
  let media = 0;
  let rest: string | undefined;
  try {
    rest = JSON.stringify(value, function (this: unknown, key: string, item: unknown) {
      if (typeof item !== "string") return item;
      const tokens = slotTokens(this, key, item);
      if (tokens === null) return item;
      media += tokens;
      return "";
    });
  } catch {
    return estimateStringTokens(json);
  }
  return media + estimateStringTokens(rest ?? "");
}

/** Media tokens of payloads held directly by a part or message (a `file` part, v4 attachments). */
function ownMediaTokens(holder: Record<string, unknown>): number {
  let tokens = 0;
  for (const key of ["url", "data", "image"]) {
    const value = holder[key];
    if (typeof value === "string") tokens += slotTokens(holder, key, value) ?? 0;
  }
  return tokens;
}

function attachmentTokens(message: SessionMessage): number {
  const attachments = (message as { experimental_attachments?: unknown }).experimental_attachments;
  if (!Array.isArray(attachments)) return 0;
  let tokens = 0;
  for (const item of attachments) {
    if (item !== null && typeof item === "object") tokens += ownMediaTokens(item as Record<string, unknown>);
  }
  return tokens;
}

/** Token estimate of one part (see `estimateMessageTokens` for the rules). */
function estimatePartTokens(part: unknown): number {
  if (part === null || typeof part !== "object") return 0;
  const { type, text, reasoning, input, output, result } = part as Record<string, unknown>;
  if (type === "text" || type === "reasoning") return estimateValueTokens(text ?? reasoning);
  if (typeof type === "string" && (type.startsWith("tool-") || type === "dynamic-tool")) {
    return estimateValueTokens(input) + estimateValueTokens(output ?? result);
  }
  const media = ownMediaTokens(part as Record<string, unknown>);
  return media + (text !== undefined ? estimateValueTokens(text) : estimateValueTokens(result));
}

/**
 * Heuristic token count of messages: 4 per message plus, per part, text/reasoning, tool input + output
 * (or legacy result), or else the part's text or result; it never throws, whatever the parts hold. Inline media
 * (and the pointer an offloaded payload leaves) counts as media: an image {@link IMAGE_TOKENS}, anything else a
 * token per 4 characters up to {@link MEDIA_TOKEN_CAP}.
 */
export function estimateMessageTokens(messages: readonly SessionMessage[]): number {
  if (!Array.isArray(messages)) return 0;
  let tokens = 0;
  for (const message of messages) {
    if (message === null || typeof message !== "object") continue;
    tokens += TOKENS_PER_MESSAGE + attachmentTokens(message);
    if (!Array.isArray(message.parts)) continue;
    for (const part of message.parts) tokens += estimatePartTokens(part);
  }
  return tokens;
}
