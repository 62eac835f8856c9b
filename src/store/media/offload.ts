import { errorMessage, SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import {
  formatPointer,
  looksLikePointer,
  MIN_OFFLOAD_CHARS,
  POINTER_PREFIX,
  type Pointer,
  type PointerForm,
  parsePointer,
  slotMediaType,
} from "../../message/media.js";
import {
  base64DecodeCanonical,
  base64Encode,
  sha256Hex,
  utf8Decode,
  utf8Encode,
} from "../../runtime/bytes.js";

/**
 * Backend-neutral offloading of inline media payloads (see media.ts for the rule and the pointer format): a
 * message's JSON is written with pointers in place of its payloads, and a read puts the exact original strings
 * back. Storage of the payloads themselves, keyed by hash, is each backend's business.
 */

/** One payload to store: its SHA-256 (hex) and its bytes. */
export interface Attachment {
  hash: string;
  bytes: Uint8Array;
}

/** A message ready to store: its JSON with pointers, and the distinct payloads the pointers name. */
export interface Offloaded {
  content: string;
  attachments: Attachment[];
}

/**
 * Finds payloads by key name in a JSON text cheaply, so messages without media skip the slow path. Raw base64 may
 * use the URL-safe alphabet or be wrapped at any width (a line break is `\n` in JSON); prose has spaces.
 */
const MAYBE_MEDIA = /"(?:data|image|url)":"(?:data:|attachment:sha256:|(?:[A-Za-z0-9+/_-]|\\[rn]){64})/;

/** SHA-256 of bytes, hex. */
export function sha256(bytes: Uint8Array): string {
  return sha256Hex(bytes);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The bytes to store for a payload string and how to rebuild it: decoded when re-encoding is exact. */
function encodePayload(value: string): { bytes: Uint8Array; form: PointerForm } | null {
  if (!looksLikePointer(value)) {
    if (value.startsWith("data:")) {
      const comma = value.indexOf(",");
      const header = value.slice(0, comma + 1);
      if (comma > 0 && header.endsWith(";base64,")) {
        const body = value.slice(comma + 1);
        const bytes = base64DecodeCanonical(body);
        if (bytes) return { bytes, form: { kind: "dataurl", header } };
      }
    } else {
      const bytes = base64DecodeCanonical(value);
      if (bytes && bytes.length > 0) return { bytes, form: { kind: "base64" } };
    }
  }
  // Stored as the string's own UTF-8, which only round-trips for well-formed strings (no lone surrogates).
  if (LONE_SURROGATE.test(value)) return null;
  return { bytes: utf8Encode(value), form: { kind: "text" } };
}

/** Options of {@link offloadMessage}. */
export interface OffloadOptions {
  /**
   * Leave well-formed pointers as they are: the input is already a stored form (a transfer import, where an
   * exported message's pointers name payloads sent beside it), not a client's message.
   */
  keepPointers?: boolean;
}

/**
 * The stored form of a message: `json` (its serialisation) with every inline payload replaced by a pointer, and
 * the distinct payloads. A string a reader would take for a pointer is offloaded too (unless `keepPointers`), so
 * every pointer in a stored row is a real one. Without a payload to offload, `content` is `json` itself.
 */
export function offloadMessage(message: object, json: string, options: OffloadOptions = {}): Offloaded {
  if (!MAYBE_MEDIA.test(json)) return { content: json, attachments: [] };
  const found = new Map<string, Uint8Array>();
  let content: string;
  try {
    content = JSON.stringify(message, function (this: unknown, key: string, value: unknown) {
      if (typeof value !== "string") return value;
      if (value.length < MIN_OFFLOAD_CHARS && !looksLikePointer(value)) return value;
      if (slotMediaType(this, key, value) === null) return value;
      if (options.keepPointers && parsePointer(value) !== null) return value;
      const encoded = encodePayload(value);
      if (!encoded) {
        // Left inline, a look-alike would be read back as a pointer and replaced by whatever payload has that hash.
        if (looksLikePointer(value)) throw unstorableLookalike(message);
        return value;
      }
      const hash = sha256(encoded.bytes);
      found.set(hash, encoded.bytes);
      return formatPointer({ hash, chars: value.length, form: encoded.form });
    });
  } catch (cause) {
    if (cause instanceof SessionError) throw cause;
    // The replacer costs stack per level: nesting that plain JSON.stringify (`json`) still managed can overflow here.
    throw new SessionError(
      "INVALID_MESSAGE",
      `Message ${describe((message as { id?: unknown }).id)} cannot be stored: its media could not be offloaded (${errorMessage(cause)})`,
      { cause, issues: [{ path: "parts", rule: "invalid" }] },
    );
  }
  if (found.size === 0) return { content: json, attachments: [] };
  return { content, attachments: [...found].map(([hash, bytes]) => ({ hash, bytes })) };
}

/**
 * Throws `INVALID_MESSAGE` where {@link offloadMessage} would, so a write refuses the message before it stores
 * anything; only a JSON holding the pointer prefix can be refused, so any other message costs one scan
 * (hand-written: every append runs it).
 */
export function assertOffloadable(message: object, json: string): void {
  if (json.includes(POINTER_PREFIX)) offloadMessage(message, json);
}

/** The refusal of a pointer look-alike that cannot be offloaded (a lone surrogate has no UTF-8 to store). */
function unstorableLookalike(message: object): SessionError {
  const id = (message as { id?: unknown }).id;
  return new SessionError(
    "INVALID_MESSAGE",
    `Message ${describe(id)} holds a media string starting with "${POINTER_PREFIX}" that ` +
      "is not well-formed Unicode: it cannot be stored, and a read would take it for a stored attachment",
    { issues: [{ path: "parts", rule: "format" }] },
  );
}

/** {@link offloadMessage} of a value known only as its JSON (parsed only when it may hold media). */
export function offloadJson(json: string, options: OffloadOptions = {}): Offloaded {
  if (!MAYBE_MEDIA.test(json)) return { content: json, attachments: [] };
  return offloadMessage(JSON.parse(json) as object, json, options);
}

/** The original string a pointer stands for, given the stored bytes. */
export function restoreString(pointer: Pointer, bytes: Uint8Array): string {
  if (pointer.form.kind === "text") return utf8Decode(bytes);
  const base64 = base64Encode(bytes);
  return pointer.form.kind === "base64" ? base64 : pointer.form.header + base64;
}

/** A pointer found in a parsed message: where it sits and what it names. */
interface Slot {
  holder: Record<string, unknown>;
  key: string;
  pointer: Pointer;
}

/** Every pointer slot of parsed messages (walked without recursion, so deep nesting cannot overflow the stack). */
function findSlots(messages: readonly unknown[]): Slot[] {
  const slots: Slot[] = [];
  const stack: unknown[] = [...messages];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      for (const item of node) if (item !== null && typeof item === "object") stack.push(item);
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key in record) {
      const value = record[key];
      if (typeof value === "string") {
        if (looksLikePointer(value) && slotMediaType(record, key, value) !== null) {
          const pointer = parsePointer(value);
          if (pointer) slots.push({ holder: record, key, pointer });
        }
      } else if (value !== null && typeof value === "object") {
        stack.push(value);
      }
    }
  }
  return slots;
}

/** Every pointer that stored JSON holds (none when it does not parse). */
export function contentPointers(content: string): Pointer[] {
  if (!content.includes("attachment:sha256:")) return [];
  try {
    return findSlots([JSON.parse(content)]).map((slot) => slot.pointer);
  } catch {
    return [];
  }
}

/** The distinct payload hashes that stored JSON points at (for link rows and transfers). */
export function contentHashes(content: string): string[] {
  if (!content.includes("attachment:sha256:")) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return [];
  }
  return [...new Set(findSlots([parsed]).map((slot) => slot.pointer.hash))];
}

/**
 * Hashes to load for parsed messages, and a function that puts the payloads back in place once they are loaded.
 * A pointer whose payload is missing stays as it is: a visible marker, never a silently wrong value.
 */
export function planHydration(messages: readonly object[]): {
  hashes: string[];
  apply(found: ReadonlyMap<string, Uint8Array>): void;
} {
  const slots = findSlots(messages);
  const hashes = [...new Set(slots.map((slot) => slot.pointer.hash))];
  return {
    hashes,
    apply(found) {
      // The same payload in many messages (a screenshot re-sent every turn) is encoded once per read.
      const restored = new Map<string, string>();
      for (const slot of slots) {
        const bytes = found.get(slot.pointer.hash);
        if (bytes === undefined) continue;
        const { form } = slot.pointer;
        const key = `${slot.pointer.hash};${form.kind === "dataurl" ? form.header : form.kind}`;
        let value = restored.get(key);
        if (value === undefined) {
          value = restoreString(slot.pointer, bytes);
          restored.set(key, value);
        }
        slot.holder[slot.key] = value;
      }
    },
  };
}

/** Restores payloads synchronously (memory, SQLite): one `load` call for every message read. */
export function hydrateSync<T extends object | null>(
  messages: T[],
  load: (hashes: string[]) => ReadonlyMap<string, Uint8Array>,
): T[] {
  const plan = planHydration(messages.filter((m): m is NonNullable<T> => m !== null));
  if (plan.hashes.length > 0) plan.apply(load(plan.hashes));
  return messages;
}

/** Restores payloads asynchronously (Postgres): one `load` call for every message read. */
export async function hydrateAsync<T extends object | null>(
  messages: T[],
  load: (hashes: string[]) => Promise<ReadonlyMap<string, Uint8Array>>,
): Promise<T[]> {
  const plan = planHydration(messages.filter((m): m is NonNullable<T> => m !== null));
  if (plan.hashes.length > 0) plan.apply(await load(plan.hashes));
  return messages;
}
