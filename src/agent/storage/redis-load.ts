import { randomBytes } from "node:crypto";
import { SessionError } from "../../errors.js";
import { CHUNK_BYTES, CHUNK_ITEMS } from "./redis-chunks.js";
import type { RedisConnection } from "./redis-client.js";
import { LOAD_FIRST, LOAD_NEXT } from "./redis-scripts.js";

/** How often a load starts over because a save or delete replaced the session while it read, before failing. */
const ATTEMPTS = 5;

/** A session's meta fields and list elements (pieces not yet joined), all as of one moment. */
export interface StoredSession {
  fields: Map<string, string>;
  messages: string[];
  usage: string[];
}

// {meta fields (flat), messages length, usage length, message elements, usage elements}
type Reply = [string[], number, number, string[], string[]];

function toFields(flat: string[]): Map<string, string> {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
  return fields;
}

function push(into: string[], items: string[]): void {
  for (const item of items) into.push(item);
}

/**
 * Reads a session in chunk scripts. Every later chunk checks the meta hash's `gen` (a new one per save): when the
 * session was replaced or deleted, the load starts over. An append keeps `gen` and only lengthens the lists, so
 * what was read stays valid and the load carries on up to the lengths the newest reply reports, with the meta
 * fields of that same reply: messages and ledger always match one version of the session.
 */
export async function loadStored(
  redis: RedisConnection,
  keys: string[],
  sessionId: string,
): Promise<StoredSession | undefined> {
  const limits = [String(CHUNK_BYTES), String(CHUNK_ITEMS)];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const first = await redis.script(LOAD_FIRST, keys, [...limits, randomBytes(12).toString("hex")]);
    if (!Array.isArray(first)) return undefined;
    let [flat, nMessages, nUsage, messages, usage] = first as Reply;
    let fields = toFields(flat);
    messages = [...messages];
    usage = [...usage];
    let replaced = false;
    while (messages.length < nMessages || usage.length < nUsage) {
      const read = messages.length + usage.length;
      const args = [fields.get("gen") ?? "", String(messages.length), String(usage.length)];
      const next = await redis.script(LOAD_NEXT, keys, [...args, ...limits]);
      if (!Array.isArray(next)) {
        replaced = true;
        break;
      }
      const [newer, m, u, moreMessages, moreUsage] = next as Reply;
      fields = toFields(newer);
      nMessages = m;
      nUsage = u;
      push(messages, moreMessages);
      push(usage, moreUsage);
      if (messages.length + usage.length === read) break;
    }
    if (replaced) continue;
    // Lists changed by something other than this storage (LTRIM, LSET of a length) would loop or mismatch.
    if (messages.length !== nMessages || usage.length !== nUsage)
      throw new SessionError("STORAGE", `Corrupt data in session ${sessionId}: its lists changed while read`);
    return { fields, messages, usage };
  }
  throw new SessionError(
    "CONFLICT",
    `Session ${sessionId} was replaced ${ATTEMPTS} times while it was being loaded; try again`,
  );
}
