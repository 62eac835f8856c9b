// Who wrote a message: `metadata.author`, the one field recall reads it from (docs/RECALL.md#who-said-it).

/**
 * A message's author: its `metadata.author` when that is a string with a word character, else undefined. Read from
 * the message itself (its stored JSON), so it needs no column: an encrypted owner's stays inside the sealed JSON.
 */
export function messageAuthor(message: unknown): string | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const metadata = (message as { metadata?: unknown }).metadata;
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return undefined;
  const author = (metadata as { author?: unknown }).author;
  return typeof author === "string" && /[\p{L}\p{N}]/u.test(author) ? author : undefined;
}

/** The author of a stored message's JSON (undefined when it has none, or the JSON is not a message). */
export function storedMessageAuthor(json: string | null | undefined): string | undefined {
  if (typeof json !== "string" || !json.includes('"author"')) return undefined;
  try {
    return messageAuthor(JSON.parse(json));
  } catch {
    // A row whose JSON does not parse has no author, as it has no searchable text (text.ts).
    return undefined;
  }
}
