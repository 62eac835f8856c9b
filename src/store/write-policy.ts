import type { SessionMessage } from "../contract/message.js";
import type { WriteSource } from "../contract/provider.js";
import type { WritePolicy, WritePolicyOptions } from "../contract/store.js";
import { SessionError } from "../errors.js";
import { EARLIEST_TIME, isBeforeEarliest, isValidCreatedAt } from "../message/created-at.js";
import { describe } from "../message/describe.js";
import { assertParentId } from "../message/ids.js";
import { serializeMessage } from "../message/json.js";
import { isEchoedOverlay } from "../message/overlay.js";
import { assertMessageShape, assertValidMessage } from "../message/validate.js";
import { sha256Base64url, utf8Length } from "../runtime/bytes.js";
import { writePolicyOptions } from "../schema/limits.js";
import { parseInput } from "../schema/parse.js";
import { assertOffloadable } from "./media/offload.js";

/** No reserved keys, no cap. */
export const OPEN_POLICY: WritePolicy = {
  reservedMetadataKeys: [],
  maxMessageBytes: Number.POSITIVE_INFINITY,
};

/** The policy a store of this package enforces on every write (its internal `policy`); none for another store. */
export function storePolicy(store: object): WritePolicy {
  const policy = (store as { policy?: Partial<WritePolicy> }).policy;
  const valid = typeof policy?.maxMessageBytes === "number" && Array.isArray(policy.reservedMetadataKeys);
  return valid ? (policy as WritePolicy) : OPEN_POLICY;
}

/** Validates write-policy options (`INVALID_ARGUMENT`, see `schema/limits.ts`). */
export function writePolicy(options: WritePolicyOptions = {}): WritePolicy {
  const { reservedMetadataKeys = [], maxMessageBytes = Number.POSITIVE_INFINITY } = parseInput(
    writePolicyOptions,
    options,
  );
  return { reservedMetadataKeys: [...reservedMetadataKeys], maxMessageBytes };
}

/** The message with the reserved metadata keys removed when a client wrote it; the same object when none apply. */
export function stripReserved(
  message: SessionMessage,
  keys: readonly string[],
  source: WriteSource | undefined,
): SessionMessage {
  if (source !== "client" || keys.length === 0) return message;
  const metadata = message.metadata;
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return message;
  // An own "__proto__" key (JSON.parse makes one) becomes the prototype wherever the metadata is copied by
  // assignment (Object.assign, the AI SDK's metadata merge), so a reserved key hidden in it would read as set.
  const dropped = [...keys, "__proto__"];
  if (!dropped.some((key) => Object.hasOwn(metadata, key))) return message;
  const kept: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
  for (const key of dropped) delete kept[key];
  return { ...message, metadata: kept };
}

/** Throws `TOO_LARGE` when the message's JSON is over the cap (hand-written: every append runs it). */
export function assertSize(message: SessionMessage, json: string, maxBytes: number): void {
  // A string of n UTF-16 units is at most 3n UTF-8 bytes: most messages are measured without encoding them.
  if (maxBytes === Number.POSITIVE_INFINITY || json.length * 3 <= maxBytes) return;
  const bytes = utf8Length(json);
  if (bytes > maxBytes) {
    throw new SessionError(
      "TOO_LARGE",
      `Message "${message.id}" is ${bytes} bytes of JSON, over the limit of ${maxBytes} (metadata included)`,
      { issues: [{ path: "", rule: "too_long" }] },
    );
  }
}

/** A write prepared once: the message to store (reserved keys stripped) and its JSON. */
export interface PreparedWrite {
  message: SessionMessage;
  json: string;
}

/**
 * Applies a policy to a write: strips reserved keys from client writes, serialises once and refuses a message
 * over the cap or one no backend can store (`INVALID_MESSAGE`: not JSON, an unstorable pointer look-alike).
 * Returns the message to store and its JSON. `first` is a policy applied before `policy` (a Session's before its
 * store's): the JSON is made again only when its stripping changed the message.
 */
export function applyPolicy(
  message: SessionMessage,
  policy: WritePolicy,
  source: WriteSource | undefined,
  first?: WritePolicy,
): PreparedWrite {
  let stored = message;
  let json: string | undefined;
  if (first) {
    stored = stripReserved(message, first.reservedMetadataKeys, source);
    json = serializeMessage(stored);
    assertSize(stored, json, first.maxMessageBytes);
  }
  const stripped = stripReserved(stored, policy.reservedMetadataKeys, source);
  if (stripped !== stored || json === undefined) json = serializeMessage(stripped);
  assertSize(stripped, json, policy.maxMessageBytes);
  assertOffloadable(stripped, json);
  return { message: stripped, json };
}

/**
 * A client's replacement of a stored message keeps the stored values of the `keys` it may not set (they were
 * stripped from its write): the write with those values put back into its metadata, or the same write when there
 * is nothing to keep. `maxBytes` caps the result as it capped the write. Backends call it with the stored message
 * read inside the replacing transaction, so no concurrent write falls in between.
 */
export function keepReserved(
  write: PreparedWrite,
  stored: SessionMessage | null | undefined,
  keys: readonly string[],
  maxBytes: number,
): PreparedWrite {
  const from = stored?.metadata;
  if (!isRecord(from)) return write;
  const kept = keys.filter((key) => key !== "__proto__" && Object.hasOwn(from, key));
  const own = write.message.metadata;
  if (kept.length === 0 || (own !== undefined && !isRecord(own))) return write;
  const metadata: Record<string, unknown> = { ...own };
  for (const key of kept) metadata[key] = from[key];
  const message = { ...write.message, metadata };
  const json = serializeMessage(message);
  assertSize(message, json, maxBytes);
  return { message, json };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** SHA-256 of a message's stored JSON: equal hashes mean an update would write the same content. */
export function contentHash(json: string): string {
  return sha256Base64url(json);
}

/** The ISO-8601 time of an imported message (`INVALID_ARGUMENT` unless a valid Date or date string from 4713 BC on); now when omitted. */
export function importTime(createdAt: Date | string | undefined): string {
  if (createdAt === undefined) return new Date().toISOString();
  // The rule of a message's own createdAt: "1" would have been read as 2001-01-01; before 4713 BC no store holds.
  const valid = isValidCreatedAt(createdAt);
  if (!valid || isBeforeEarliest(createdAt)) {
    const kind = valid ? "range" : typeof createdAt === "string" ? "format" : "type";
    throw new SessionError(
      "INVALID_ARGUMENT",
      valid
        ? `createdAt must not be before ${EARLIEST_TIME} (4713 BC), the earliest time every store holds`
        : `createdAt must be a Date or an ISO-8601 date-time, got ${describe(createdAt)}`,
      { issues: [{ path: "createdAt", rule: kind }] },
    );
  }
  return new Date(createdAt).toISOString();
}

/**
 * What every append and upsert starts with: the message's shape and parent are checked (`INVALID_MESSAGE`,
 * `INVALID_ARGUMENT`), an echoed overlay yields null (the caller stores nothing), then the policy applies
 * (`first`: see {@link applyPolicy}).
 */
export function prepareAppend(
  message: SessionMessage,
  parentId: unknown,
  policy: WritePolicy,
  source: WriteSource | undefined,
  first?: WritePolicy,
): PreparedWrite | null {
  assertMessageShape(message);
  assertParentId(parentId);
  return isEchoedOverlay(message) ? null : applyPolicy(message, policy, source, first);
}

/** What every update and import starts with: a valid, non-overlay message (`RESERVED_ID`) under the policy. */
export function prepareServerWrite(
  message: SessionMessage,
  policy: WritePolicy,
  first?: WritePolicy,
): PreparedWrite {
  assertValidMessage(message);
  return applyPolicy(message, policy, "server", first);
}
