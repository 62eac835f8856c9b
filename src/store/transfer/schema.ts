/**
 * The records of a transfer stream (`contract/transfer.ts`: a session header, messages, overlays, attachments, block and
 * entry rows), described once: every backend's importer, adoption and the CLI's import check parse them here, so a
 * damaged record fails alike everywhere, with a message naming the record and the field (`The parent of message
 * "m2" must be …`). Only the record is described: the message its `content` holds is checked by the append path's
 * own rules (`store/transfer/validate.ts`). Each schema is built once, here: an import parses every record.
 */
import { z } from "zod";
import type { StoredCompaction } from "../../contract/message.js";
import type {
  TransferAttachment,
  TransferMessage,
  TransferRow,
  TransferSession,
} from "../../contract/transfer.js";
import type { SessionIssueRule } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { assertSessionId, fitsBytes, isStorableId, MAX_NAME_BYTES } from "../../message/ids.js";
import { parseInput } from "../../schema/parse.js";
import { checkedBy } from "../../schema/rules.js";
import { rule, ruleOf } from "../../schema/to-session-error.js";
import { MAX_BLOCK_KEY_BYTES } from "../keys.js";
import { isOwnerId, MAX_OWNER_BYTES } from "../owner.js";

type Wording = (text: string, kind: SessionIssueRule) => ReturnType<typeof rule>;

/** A field whose message starts with `what` ("An overlay id must be …"). */
const said =
  (what: string): Wording =>
  (text, kind) =>
    rule(`${what} ${text}`, kind);

/** A field whose message names its record ("The parent" → `The parent of message "m2" must be …`). */
const of =
  (field: string): Wording =>
  (text, kind) =>
    ruleOf(field, text, kind);

const isName = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && isStorableId(value);

/** A stored name: the rule of `assertId` (non-empty, well-formed, no U+0000, at most `maxBytes` in UTF-8). */
function storedName(word: Wording, maxBytes = MAX_NAME_BYTES) {
  const unnamable = word("must be a non-empty, well-formed Unicode string without U+0000", "format");
  const tooLong = word(`must be at most ${maxBytes} bytes in UTF-8`, "too_long");
  return z
    .custom<string>(isName, { ...unnamable, abort: true })
    .refine((value) => fitsBytes(value, maxBytes), tooLong);
}

// Times travel in toISOString() form, which every backend stores and returns unchanged.
const isTransferTime = (value: unknown): value is string => {
  const date = typeof value === "string" ? new Date(value) : undefined;
  return date !== undefined && !Number.isNaN(date.getTime()) && date.toISOString() === value;
};
const time = z.custom<string>(
  isTransferTime,
  ruleOf("The time", "must be in toISOString() form (2025-01-31T12:00:00.000Z)", "format"),
);

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;
const isString = (value: unknown): value is string => typeof value === "string";

// A field whose message names its record is a custom check: only those carry the field's words to the mapping.
const stringOf = (field: string) => z.custom<string>(isString, ruleOf(field, "must be a string"));

/** A session's header: a storable session id and leaf; its registry row (stored as given) names the session. */
export const transferHeader = z
  .object(
    {
      id: checkedBy<string>(assertSessionId),
      leafId: storedName(of("The leaf")).nullable(),
      info: z
        .custom<{ id: unknown }>(
          (value) => isObject(value) && !Array.isArray(value),
          ruleOf("The registry row", "must be an object or null"),
        )
        .nullable(),
    },
    rule("A session header must be an object"),
  )
  .refine((header) => header.info === null || header.info.id === header.id, {
    path: ["info", "id"],
    params: { rule: "conflict" },
    error: (issue) => {
      const header = issue.input as TransferSession;
      return `The registry row of session "${header.id}" names another session (${describe(header.info?.id)})`;
    },
  })
  // Checked here, as `create` checks it: an import must not store an owner no view could name.
  .refine((header) => validOwner((header.info as { owner?: unknown } | null)?.owner), {
    path: ["info", "owner"],
    params: { rule: "format" },
    error: (issue) => {
      const header = issue.input as TransferSession;
      const owner = (header.info as { owner?: unknown } | null)?.owner;
      return `The owner of session "${header.id}" must be a non-empty, well-formed string of at most ${MAX_OWNER_BYTES} bytes in UTF-8 without control characters, got ${describe(owner)}`;
    },
  })

  // A pin is a flag: anything but a boolean (or none) is a forged or damaged row, not a way to pin.
  .refine((header) => validPinned((header.info as { pinned?: unknown } | null)?.pinned), {
    path: ["info", "pinned"],
    params: { rule: "format" },
    error: (issue) => {
      const header = issue.input as TransferSession;
      const pinned = (header.info as { pinned?: unknown } | null)?.pinned;
      return `The pinned flag of session "${header.id}" must be true, false or absent, got ${describe(pinned)}`;
    },
  });

function validPinned(pinned: unknown): boolean {
  return pinned === undefined || typeof pinned === "boolean";
}

function validOwner(owner: unknown): boolean {
  return owner === undefined || owner === null || isOwnerId(owner);
}

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
    content: stringOf("The stored JSON"),
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
    summary: stringOf("The summary"),
    createdAt: time,
    details: z.custom<object>(isObject, ruleOf("The details", "must be an object")).optional(),
  },
  rule("An overlay must be an object"),
);

/** A payload: its SHA-256 name (whether the bytes hash to it is checked where the payload is accepted) and bytes. */
export const transferAttachment = z.object(
  {
    hash: z
      .string(rule("An attachment's name must be its SHA-256 in 64 lower-case hex digits", "format"))
      .regex(/^[0-9a-f]{64}$/),
    bytes: z.custom<Uint8Array>(
      (value) => value instanceof Uint8Array,
      ruleOf("The bytes", "must be a Uint8Array"),
    ),
  },
  rule("An attachment must be an object"),
);

const content = stringOf("The content");

/**
 * Whose a row is (contract/transfer.ts TransferRecord): a named session's id or an owner, each as the write path
 * takes it (`parseRecord`), at most one of the two; a row with neither gets the legacy rule on import.
 */
const record = {
  sessionId: storedName(of("The recorded session")).optional(),
  owner: z
    .custom<string>(
      isOwnerId,
      ruleOf(
        "The owner",
        `must be a non-empty, well-formed string of at most ${MAX_OWNER_BYTES} bytes in UTF-8 without control characters`,
        "format",
      ),
    )
    .optional(),
};

/** A context block or a searchable entry, with names every backend stores exactly, and its record if any. */
export const transferRow = z
  .discriminatedUnion(
    "kind",
    [
      z.object({
        kind: z.literal("block"),
        key: storedName(said("A block key"), MAX_BLOCK_KEY_BYTES),
        content,
        ...record,
      }),
      z.object({
        kind: z.literal("entry"),
        label: storedName(said("An entry label")),
        key: storedName(said("An entry key")),
        content,
        ...record,
      }),
    ],
    rule('A row must be an object whose kind is "block" or "entry"'),
  )
  // A row is one session's or one owner's: both would leave erasure to guess which of them removes it.
  .refine((row) => row.sessionId === undefined || row.owner === undefined, {
    path: ["owner"],
    params: { rule: "conflict" },
    error: (issue) =>
      `The record of ${named.row.of(issue.input)} names both a session and an owner (it is one or the other)`,
  });

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
