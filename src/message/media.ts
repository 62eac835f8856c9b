/**
 * The typed rule that says which strings of a message are inline media payloads, and the pointer format that
 * stands in for an offloaded one. Shared by the attachment store (what to offload and restore) and the token
 * estimator (what counts as media), so both always agree on the same slots.
 */

/** Every pointer starts with this; the 64 hex digits of the payload's SHA-256 follow. */
export const POINTER_PREFIX = "attachment:sha256:";

/**
 * Payloads shorter than this many characters stay inline: a pointer costs about 100 characters plus link rows,
 * so offloading a tiny icon would cost more than it saves. Pointer look-alikes are offloaded whatever their size.
 */
export const MIN_OFFLOAD_CHARS = 512;

/** Keys whose string value can be a payload: `url` (data URLs), `data` (base64 fields), `image` (model parts). */
const SLOT_KEYS = new Set(["url", "data", "image"]);

/** Part and content-item types whose `data` field is an inline payload (AI SDK v4–v6, MCP tool results). */
const DATA_TYPES = new Set(["file", "image", "audio", "media", "image-data", "file-data"]);

/** How to rebuild the original string from the stored bytes. */
export type PointerForm =
  /** The string was exactly the standard base64 of the bytes. */
  | { kind: "base64" }
  /** The string was a base64 data URL: this header (up to and including the comma) plus the base64 of the bytes. */
  | { kind: "dataurl"; header: string }
  /** The bytes are the UTF-8 of the string itself (re-encoding would not have reproduced it exactly). */
  | { kind: "text" };

/** A parsed pointer: the payload's hash, the original string's length and how to rebuild it. */
export interface Pointer {
  hash: string;
  chars: number;
  form: PointerForm;
}

const POINTER = /^attachment:sha256:([0-9a-f]{64});(\d+);(b64|text|data:[^,]*,)$/;

/** The pointer string for a payload: `attachment:sha256:<hex>;<original length>;<b64 | text | data-URL header>`. */
export function formatPointer(pointer: Pointer): string {
  const { form } = pointer;
  const suffix = form.kind === "base64" ? "b64" : form.kind === "text" ? "text" : form.header;
  return `${POINTER_PREFIX}${pointer.hash};${pointer.chars};${suffix}`;
}

/** Parses a pointer string; null when it is not one. */
export function parsePointer(value: string): Pointer | null {
  if (!value.startsWith(POINTER_PREFIX)) return null;
  const match = POINTER.exec(value);
  if (!match) return null;
  const [, hash, chars, suffix] = match as unknown as [string, string, string, string];
  const form: PointerForm =
    suffix === "b64"
      ? { kind: "base64" }
      : suffix === "text"
        ? { kind: "text" }
        : { kind: "dataurl", header: suffix };
  return { hash, chars: Number(chars), form };
}

/** True for a string a reader would take for a pointer (so a writer must never leave one inline). */
export function looksLikePointer(value: string): boolean {
  return value.startsWith(POINTER_PREFIX);
}

/** The media type a data URL declares (`data:image/png;base64,…` → `image/png`), lower-cased; "" when none. */
export function dataUrlMediaType(value: string): string {
  const end = value.search(/[;,]/);
  return end < 5 ? "" : value.slice(5, end).toLowerCase();
}

function declaredMediaType(holder: Record<string, unknown>): string | undefined {
  const declared = holder.mediaType ?? holder.mimeType ?? holder.contentType;
  return typeof declared === "string" ? declared.toLowerCase() : undefined;
}

/** True for media types that are text (kept inline and searchable): text/*, JSON, XML, YAML, JavaScript. */
export function isTextMediaType(mediaType: string): boolean {
  if (mediaType.startsWith("text/")) return true;
  if (mediaType.startsWith("image/")) return false;
  return (
    /^application\/(json|xml|yaml|x-yaml|javascript|x-ndjson|ld\+json)\b/.test(mediaType) ||
    /\+(json|xml)$/.test(mediaType)
  );
}

/**
 * The media type of a payload slot: `value` (found under `key` in `holder`) is an inline payload or a pointer,
 * and this is what it declares ("application/octet-stream" when it declares nothing). Null when the string is
 * not a payload: wrong key, a text media type, or no inline data (an http URL, a file id).
 */
export function slotMediaType(holder: unknown, key: string, value: string): string | null {
  if (!SLOT_KEYS.has(key) || holder === null || typeof holder !== "object" || Array.isArray(holder))
    return null;
  const node = holder as Record<string, unknown>;
  const declared = declaredMediaType(node);
  if (looksLikePointer(value)) {
    const pointer = parsePointer(value);
    const fromHeader = pointer?.form.kind === "dataurl" ? dataUrlMediaType(pointer.form.header) : "";
    return declared ?? (fromHeader || "application/octet-stream");
  }
  let mediaType: string | undefined;
  if (value.startsWith("data:")) {
    mediaType = declared ?? (dataUrlMediaType(value) || undefined);
  } else if (key === "data" && typeof node.type === "string" && DATA_TYPES.has(node.type)) {
    mediaType = declared ?? (node.type.startsWith("image") ? "image/*" : undefined);
  } else if (key === "image" && node.type === "image") {
    mediaType = declared ?? "image/*";
  } else {
    return null;
  }
  if (mediaType === undefined) return key === "url" ? null : "application/octet-stream";
  return isTextMediaType(mediaType) ? null : mediaType;
}
