/**
 * Erasing what an eve session left (docs/EVE.md, "clear()"): eve's `clear()` empties the eve session's history but
 * never touches a provider's store, so the door's sessions of that eve session (one per memory scope, with the
 * facts, vectors and media derived from them) stay recallable until erased here, or with the owner's `eraseOwner`.
 */
import type { SessionManager } from "../manager/manager.js";
import { addCounts, type ErasureReceipt, emptyReceipt } from "../store/erasure.js";
import { eveSessionTag, SOURCE_PREFIX } from "./ids.js";

/** Registry rows read per page. */
const PAGE = 200;

/**
 * Erases the sessions `owner`'s memory kept of eve session `eveSessionId` (every scope and slot), as
 * `SessionManager.erase` erases a session (messages, facts learned from them, vectors, media, blocks); a receipt
 * with no session when there was none. Run `store.purge()` after it for no readable copy on disk.
 */
export async function eraseEveSession(
  manager: SessionManager,
  owner: string,
  eveSessionId: string,
): Promise<ErasureReceipt> {
  const view = manager.forOwner(owner);
  const tag = `:${eveSessionTag(eveSessionId)}`;
  const doomed: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const rows = await view.list({ limit: PAGE, offset });
    for (const row of rows)
      if (row.source?.startsWith(SOURCE_PREFIX) && row.source.endsWith(tag)) doomed.push(row.id);
    if (rows.length < PAGE) break;
  }
  const receipt = emptyReceipt();
  for (const id of doomed) {
    const one = await view.erase(id);
    receipt.sessionIds.push(...one.sessionIds);
    addCounts(receipt, one);
  }
  return receipt;
}
