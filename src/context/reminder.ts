import { errorMessage, SessionError } from "../errors.js";
import { neutralizeContent } from "./neutralize.js";
import { renderBlock, SEPARATOR } from "./render.js";
import type { ContextBlock } from "./types.js";

/** The note a reminder opens with: the values below replace the prompt's copies (the reference's wording). */
export const REMINDER_PREAMBLE =
  "These context blocks changed after the system prompt was written. " +
  "Their current values below replace the ones in the system prompt.";

/**
 * The section every reminder opens with: a border, the header `CONTEXT REMINDER [readonly]`, a border, then the
 * preamble. Border and header lines are drawn only by the library (`neutralizeContent` redraws them in block
 * content and in the user's text the model is given), so a user who types a reminder cannot make it open like this.
 */
export const REMINDER_OPENING = `${SEPARATOR}\nCONTEXT REMINDER [readonly]\n${SEPARATOR}\n${REMINDER_PREAMBLE}`;

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

/** The reminder text for changed blocks: the opening section, then each block's current section; null when none. */
export function renderReminder(changed: readonly ContextBlock[]): string | null {
  if (changed.length === 0) return null;
  return [REMINDER_OPENING, ...changed.map(renderBlock)].join("\n\n");
}

/**
 * A reminder that could not be built, as a `SessionError`: one already is kept (its code says why; a block's read
 * failure names the block); anything else becomes `STORAGE` with the original as `cause`.
 */
export function reminderFailure(error: unknown): SessionError {
  if (error instanceof SessionError) return error;
  return new SessionError("STORAGE", `The context reminder could not be built: ${errorMessage(error)}`, {
    cause: error,
  });
}

/**
 * A block's provider that failed to read (when a Session opens, for a reminder, after a tool's write), as a
 * `SessionError`: one already is kept; anything else becomes `STORAGE` (the provider is the block's storage),
 * naming the block, with the original as `cause`, so a failing provider never surfaces as a bare `Error`.
 */
export function blockReadFailure(error: unknown, label: string): SessionError {
  if (error instanceof SessionError) return error;
  return new SessionError("STORAGE", `Context block "${label}" could not be read: ${errorMessage(error)}`, {
    cause: error,
  });
}

/** The parts with every text part's text neutralised (see `neutralizeContent`); the same array when none changes. */
export function neutralizeTextParts<P extends { type: string }>(parts: P[]): P[] {
  let changed = false;
  const out = parts.map((part) => {
    if (part.type !== "text") return part;
    const { text } = part as P & { text: string };
    const neutral = neutralizeContent(text);
    if (neutral === text) return part;
    changed = true;
    return { ...part, text: neutral };
  });
  return changed ? out : parts;
}

/**
 * `messages` for the model, whichever SDK's shape they have: every user message neutralised by `neutralize` (the
 * same object when none changes), and a non-null `reminder` added by `remind` to the latest user message, after
 * the cached prefix (the system prompt and earlier turns stay byte-identical). Copies only, so stored messages
 * never change; the same array when there is nothing to neutralise or remind.
 */
export function remindLatestUser<M extends { role: string }>(
  messages: M[],
  reminder: string | null,
  neutralize: (message: M) => M,
  remind: (message: M, reminder: string) => M,
): M[] {
  let out = messages;
  let latestUser = -1;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "user") continue;
    latestUser = i;
    const neutral = neutralize(message);
    if (neutral === message) continue;
    if (out === messages) out = [...messages];
    out[i] = neutral;
  }
  if (reminder === null || latestUser < 0) return out;
  if (out === messages) out = [...messages];
  out[latestUser] = remind(out[latestUser]!, reminder);
  return out;
}
