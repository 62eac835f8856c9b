/**
 * The facts of a transfer: every fact of a store read page by page (scope, sources, status, what superseded it,
 * producer and times), and written to another in calls of 100 (FactStore.importFacts: a fact whose id its scope
 * holds is skipped; one naming a message the store does not hold is refused). Facts move after the sessions whose
 * messages they name.
 */
import type { Fact, FactStore } from "../../contract/facts.js";
import type { ImportCounts } from "../../contract/transfer.js";
import { FACT_PAGE } from "../facts.js";

/** Every fact of the store, by scope then store order, whatever its status. */
export async function* exportFacts(facts: FactStore): AsyncGenerator<Fact> {
  let cursor: string | null = null;
  do {
    const page = await facts.exportPage({ cursor, limit: FACT_PAGE });
    yield* page.facts;
    cursor = page.next;
  } while (cursor !== null);
}

/** Writes a stream of exported facts, {@link FACT_PAGE} a call. */
export async function importFactStream(facts: FactStore, items: AsyncIterable<Fact>): Promise<ImportCounts> {
  const counts: ImportCounts = { inserted: 0, skipped: 0 };
  let batch: Fact[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const done = await facts.importFacts(batch);
    counts.inserted += done.inserted;
    counts.skipped += done.skipped;
    batch = [];
  };
  for await (const fact of items) {
    batch.push(fact);
    if (batch.length >= FACT_PAGE) await flush();
  }
  await flush();
  return counts;
}
