/**
 * The records of a transfer stream (`store/types.ts`: a session header, messages, overlays, attachments, block and
 * entry rows), described once: every backend's importer, adoption and the CLI's import check parse them here, so a
 * damaged record fails alike everywhere, with a message naming the record and the field (`The parent of message
 * "m2" must be …`). Only the record is described: the message its `content` holds is checked by the append path's
 * own rules (`store/transfer/validate.ts`). Each schema is built once, here: an import parses every record.
 */
import { z } from "zod";
import { describe } from "../message/describe.js";
import { assertSessionId, fitsBytes, isStorableId, MAX_NAME_BYTES } from "../message/ids.js";
import { MAX_BLOCK_KEY_BYTES } from "../store/keys.js";
import { isOwnerId, MAX_OWNER_BYTES } from "../store/owner.js";
import type { TransferAttachment, TransferMessage, TransferRow, TransferSession } from "../store/types.js";
import type { StoredCompaction } from "../types.js";
import { checkedBy } from "./rules.js";
import { parseInput, rule, ruleOf } from "./to-session-error.js";

type Wording = (text: string) => ReturnType<typeof rule>;

/** A field whose message starts with `what` ("An overlay id must be …"). */
const said =
  (what: string): Wording =>
  (text) =>
    rule(`${what} ${text}`);

/** A field whose message names its record ("The parent" → `The parent of message "m2" must be …`). */
const of =
  (field: string): Wording =>
  (text) =>
    ruleOf(field, text);

const isName = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && isStorableId(value);

/** A stored name: the rule of `assertId` (non-empty, well-formed, no U+0000, at most `maxBytes` in UTF-8). */
function storedName(word: Wording, maxBytes = MAX_NAME_BYTES) {
  const unnamable = word("must be a non-empty, well-formed Unicode string without U+0000");
  const tooLong = word(`must be at most ${maxBytes} bytes in UTF-8`);
  return z.custom<string>((value) => isName(value) && fitsBytes(value, maxBytes), {
    error: (issue) => (isName(issue.input) ? tooLong : unnamable).error(issue),
  });
}

// Times travel in toISOString() form, which every backend stores and returns unchanged.
const isTransferTime = (value: unknown): value is string => {
  const date = typeof value === "string" ? new Date(value) : undefined;
  return date !== undefined && !Number.isNaN(date.getTime()) && date.toISOString() === value;
};
const time = z.custom<string>(
  isTransferTime,
  ruleOf("The time", "must be in toISOString() form (2025-01-31T12:00:00.000Z)"),
);

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;

/** A session's header: a storable session id and leaf; its registry row (stored as given) names the session. */
export const transferHeader = z
  .object(
    {
      id: checkedBy<string>(assertSessionId),
      leafId: storedName(of("The leaf")).nullable(),
      info: z
        .looseObject(
          {
            id: z.unknown(),
            // Checked here, as `create` checks it: an import must not store an owner no view could name.
            owner: z
              .custom<string | null>(
                (value) => value === null || isOwnerId(value),
                ruleOf(
                  "The owner",
                  `must be a non-empty, well-formed string of at most ${MAX_OWNER_BYTES} bytes in UTF-8 without control characters`,
                ),
              )
              .optional(),
          },
          ruleOf("The registry row", "must be an object or null"),
        )
        .nullable(),
    },
    rule("A session header must be an object"),
  )
  .refine((header) => header.info === null || header.info.id === header.id, {
    path: ["info", "id"],
    error: (issue) => {
      const header = issue.input as TransferSession;
      return `The registry row of session "${header.id}" names another session (${describe(header.info?.id)})`;
    },
  });

/**
 * A message record: storable ids, its time, and its stored JSON as a string. Its `role` is compared with the role
 * of the message the JSON holds (`INVALID_MESSAGE`), with the rest of that message, in `store/transfer/validate.ts`.
 */
export const transferMessage = z.object(
  {
    id: storedName(said("A transferred message id")),
    parentId: storedName(of("The parent")).nullable(),
    role: z.unknown(),
    createdAt: time,
    content: z.string(ruleOf("The stored JSON", "must be a string")),
  },
  rule("A transferred message must be an object"),
);

const transferLinks = transferMessage.pick({ id: true, parentId: true });

/** An overlay record: storable ids for itself and the messages it spans, a string summary, its time. */
export const transferCompaction = z.object(
  {
    id: storedName(said("An overlay id")),
    fromMessageId: storedName(of("The start")),
    toMessageId: storedName(of("The end")),
    summary: z.string(ruleOf("The summary", "must be a string")),
    createdAt: time,
    details: z.custom<object>(isObject, ruleOf("The details", "must be an object")).optional(),
  },
  rule("An overlay must be an object"),
);

/** A payload: its SHA-256 name (whether the bytes hash to it is checked where the payload is accepted) and bytes. */
export const transferAttachment = z.object(
  {
    hash: z
      .string(rule("An attachment's name must be its SHA-256 in 64 lower-case hex digits"))
      .regex(/^[0-9a-f]{64}$/),
    bytes: z.instanceof(Uint8Array, ruleOf("The bytes", "must be a Uint8Array")),
  },
  rule("An attachment must be an object"),
);

const content = z.string(ruleOf("The content", "must be a string"));

/** A context block or a searchable entry, with names every backend stores exactly. */
export const transferRow = z.discriminatedUnion(
  "kind",
  [
    z.object({
      kind: z.literal("block"),
      key: storedName(said("A block key"), MAX_BLOCK_KEY_BYTES),
      content,
    }),
    z.object({
      kind: z.literal("entry"),
      label: storedName(said("An entry label")),
      key: storedName(said("An entry key")),
      content,
    }),
  ],
  rule('A row must be an object whose kind is "block" or "entry"'),
);

// How each record is named in a message about one of its fields (its id is checked first, so it is a string).
const idOf = (record: unknown) => String((record as { id?: unknown }).id);
const named = {
  session: { of: (header: unknown) => `session "${idOf(header)}"` },
  message: { of: (message: unknown) => `message "${idOf(message)}"` },
  overlay: { of: (compaction: unknown) => `overlay "${idOf(compaction)}"` },
  attachment: { of: (attachment: unknown) => `attachment ${(attachment as TransferAttachment).hash}` },
  row: {
    of: (row: unknown) => {
      const { kind, key } = row as TransferRow;
      return `${kind} "${key}"${kind === "entry" ? ` in "${(row as { label: string }).label}"` : ""}`;
    },
  },
};

/** A check of one kind of record: throws `INVALID_ARGUMENT` (naming the record) unless `schema` accepts it. */
function checker<T>(schema: z.ZodType, naming: { of: (record: unknown) => string }): (record: T) => void {
  return (record) => {
    parseInput(schema, record, naming);
  };
}

/** Throws unless `header` is a {@link transferHeader}. */
export const assertTransferHeader = checker<TransferSession>(transferHeader, named.session);
/** Throws unless `message` is a {@link transferMessage} (the message its content holds is checked apart). */
export const assertTransferMessage = checker<TransferMessage>(transferMessage, named.message);
/**
 * Throws unless a message record's id and parent are those of a {@link transferMessage}: what an unreadable record
 * left out of an import still needs, as its ids link the tree.
 */
export const assertTransferLinks = checker<TransferMessage>(transferLinks, named.message);
/** Throws unless `compaction` is a {@link transferCompaction}. */
export const assertTransferCompaction = checker<StoredCompaction>(transferCompaction, named.overlay);
/** Throws unless `attachment` is a {@link transferAttachment}. */
export const assertTransferAttachment = checker<TransferAttachment>(transferAttachment, named.attachment);
/** Throws unless `row` is a {@link transferRow}. */
export const assertTransferRow = checker<TransferRow>(transferRow, named.row);
