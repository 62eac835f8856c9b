// Helpers of the history specs (streaming reads and recent-history budgets): the batches a stream yields, a
// message's size as a byte budget counts it, and an image message of a given payload size.

import type { SessionMessage } from "../../contract/message.js";
import type { HistoryReadOptions } from "../../contract/provider.js";
import type { SessionStore } from "../../contract/store.js";
import { Session } from "../../session/session.js";
import { png, imageMessage as withImage } from "./media-harness.js";

/** The batches `Session.historyBatches(options)` yields for `sessionId`, collected. */
export async function batches(
  store: SessionStore,
  options: HistoryReadOptions,
  sessionId = "a",
): Promise<SessionMessage[][]> {
  const out: SessionMessage[][] = [];
  for await (const batch of new Session(store, { sessionId }).historyBatches(options)) out.push(batch);
  return out;
}

/** A message's JSON size in bytes. */
export const size = (m: SessionMessage): number => Buffer.byteLength(JSON.stringify(m));

/** A user message with a text part and an inline PNG of `bytes` pseudo-random bytes (media-harness's image). */
export function imageMessage(id: string, bytes: number, seed: number): SessionMessage {
  return withImage(id, png(bytes, seed));
}
