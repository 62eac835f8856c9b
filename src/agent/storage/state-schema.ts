/**
 * The `SessionState` every agent storage's `save()` and `create()` takes, checked once before anything is written,
 * so a bad state is the caller's error (`INVALID_ARGUMENT`, `INVALID_MESSAGE` for the messages) on every backend.
 * Before, memory called metadata `[1, 2]` corrupt data, file/SQLite/Postgres/Redis stored it and then failed every
 * load, Redis half-wrote a state with `createdAt: NaN`, and only the store-backed storages checked message ids.
 */
import { z } from "zod";
import { SessionError } from "../../errors.js";
import { describe } from "../../message/describe.js";
import { assertNamedSessionId, isStorableId } from "../../message/ids.js";
import { parseInput } from "../../schema/parse.js";
import { checkedBy, finite } from "../../schema/rules.js";
import { rule } from "../../schema/to-session-error.js";
import type { SessionState } from "../types.js";

const plainObject = (field: string) =>
  z.custom<Record<string, unknown>>(
    (value) => typeof value === "object" && value !== null && !Array.isArray(value),
    rule(`${field} must be an object`, "type"),
  );

// Messages are checked by hand below: a state may hold tens of thousands, and only their list and ids matter here.
const state = z.looseObject(
  {
    id: checkedBy(assertNamedSessionId),
    usage: z.looseObject(
      {
        entries: z.array(
          plainObject("A ledger entry"),
          rule("usage.entries must be a list of ledger entries"),
        ),
      },
      rule("usage must be an object with a list of entries"),
    ),
    metadata: plainObject("metadata"),
    createdAt: finite("createdAt"),
    updatedAt: finite("updatedAt"),
    parentId: z
      .string(rule("parentId must be a session id"))
      .refine((id) => id.length > 0 && isStorableId(id), { params: { rule: "format" } })
      .optional(),
  },
  rule("A session state must be an object"),
);

/**
 * Throws `INVALID_MESSAGE` unless every message is an object with a storable id, unique within the list.
 * Hand-written: the store-backed storage runs it on every agent append, and a saved state may hold tens of thousands.
 */
export function assertStateMessages(messages: unknown): void {
  if (!Array.isArray(messages))
    throw new SessionError(
      "INVALID_MESSAGE",
      `A session state needs a list of messages, got ${describe(messages)}`,
      { issues: [{ path: "messages", rule: messages === undefined ? "required" : "type" }] },
    );
  const seen = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (typeof message !== "object" || message === null || Array.isArray(message))
      throw new SessionError("INVALID_MESSAGE", `A message must be an object, got ${describe(message)}`, {
        issues: [{ path: `messages.${index}`, rule: "type" }],
      });
    const id = (message as { id?: unknown }).id;
    // "compaction_" ids are the store's synthetic overlays: refused everywhere, so a session moves between backends.
    if (typeof id !== "string" || id.length === 0 || !isStorableId(id) || id.startsWith("compaction_")) {
      throw new SessionError(
        "INVALID_MESSAGE",
        `An agent message needs a non-empty id without U+0000 or lone surrogates, not starting with "compaction_"; got ${JSON.stringify(id)}`,
        { issues: [{ path: `messages.${index}.id`, rule: typeof id === "string" ? "format" : "type" }] },
      );
    }
    if (seen.has(id))
      throw new SessionError("INVALID_MESSAGE", `Two messages have the id ${JSON.stringify(id)}`, {
        issues: [{ path: `messages.${index}.id`, rule: "conflict" }],
      });
    seen.add(id);
  }
}

/** Throws unless `value` is a whole `SessionState` a storage can write and load back (see the module comment). */
export function assertSessionState(value: unknown): asserts value is SessionState {
  parseInput(state, value);
  assertStateMessages((value as { messages?: unknown }).messages);
}
