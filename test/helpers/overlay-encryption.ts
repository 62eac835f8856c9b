// What the sealed-summary tests share on every backend: an encrypted owner's compaction summary and a clear one that
// reads like sealed content, their read-back every way a provider reads, and the summaries a change log replays.
import assert from "node:assert/strict";
import type { ChangeEvent, FeedCapableStore } from "../../src/contract/feed.js";
import type { StoredCompaction } from "../../src/contract/message.js";
import type { SessionStore } from "../../src/contract/store.js";
import type { TransferCapableStore } from "../../src/contract/transfer.js";

/** The plaintext of alice's summary that must never be in the store's bytes; one word. */
export const SUMMARY_SECRET = "zqxsealedsummaryq";
/** Alice's summary (her owner has a key). */
export const SUMMARY = `alice said ${SUMMARY_SECRET} five times`;
/** Bob's summary (no key): clear text that starts like sealed content, so it must not be taken for sealed. */
export const LOOKALIKE = "~sealed2:0123456789abcdef:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==:c0";

/** Adds alice's overlay over a0..a2 and bob's over b0 (seedOwners' sessions). */
export async function compact(store: SessionStore, alice: string, bob: string): Promise<StoredCompaction> {
  const overlay = await store.session(alice).addCompaction(SUMMARY, "a0", "a2", { coveredMessages: 3 });
  await store.session(bob).addCompaction(LOOKALIKE, "b0", "b0");
  return overlay;
}

/** Every read of a summary opens alice's and gives bob's back exactly; an export holds the opened summary. */
export async function assertSummariesReadBack(
  store: SessionStore & TransferCapableStore,
  alice: string,
  bob: string,
): Promise<void> {
  const provider = store.session(alice);
  assert.deepEqual(
    (await provider.getCompactions()).map((c) => c.summary),
    [SUMMARY],
  );
  const history = JSON.stringify(await provider.getHistory());
  assert.ok(history.includes(SUMMARY), "the history's overlay message holds the opened summary");
  assert.ok(!history.includes("~sealed"));
  const recent = JSON.stringify((await provider.getRecentHistory?.(undefined, 1e6))?.messages);
  assert.ok(recent.includes(SUMMARY));
  assert.ok(((await provider.getContextTokens?.()) ?? 1) > 0);
  const exported = [];
  for await (const item of store.transfer.exportSession(alice)) exported.push(item);
  assert.ok(JSON.stringify(exported).includes(SUMMARY), "an export holds the opened summary");
  assert.deepEqual(
    (await store.session(bob).getCompactions()).map((c) => c.summary),
    [LOOKALIKE],
  );
  assert.ok(JSON.stringify(await store.session(bob).getHistory()).includes(LOOKALIKE));
}

/**
 * The compaction events and resets a subscriber of `store` gets replaying the change log from the start, once bob's
 * overlay (the last written) arrived (10 s at most).
 */
export async function replayed(store: FeedCapableStore): Promise<ChangeEvent[]> {
  const events: ChangeEvent[] = [];
  const stop = store.subscribe(
    (event) => {
      if (event.type === "compaction" || event.type === "reset") events.push(event);
    },
    { after: 0 },
  );
  const end = Date.now() + 10_000;
  while (!summariesOf(events).includes(LOOKALIKE) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 10));
  }
  stop();
  return events;
}

/** The summaries of the compaction events among `events`. */
export const summariesOf = (events: readonly ChangeEvent[]) =>
  events.flatMap((e) => (e.type === "compaction" ? [e.compaction.summary] : []));
