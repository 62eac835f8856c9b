import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type { RecentHistoryResult } from "../contract/provider.js";
import { parseMessage } from "../message/json.js";
import { boundBytes, type PathBackend } from "./history-stream.js";
import { byteBudget } from "./limits.js";
import { readBackBytes } from "./media/read-back.js";
import { applyOverlays } from "./overlays.js";

/** Rows whose tree columns are read per step of the walk from the leaf. */
const STEP_ROWS = 64;

/**
 * The newest messages of a path whose bytes fit `maxBytes` counting offloaded media as it reads back (see
 * read-back.ts), always at least the leaf and at least `minRecent` rows (the reference's floor; default 1).
 * Walks up from the leaf in steps: a step's content is read only for rows whose stored bytes (a lower bound of
 * their read-back size) still fit, and only the returned messages are restored. Overlays apply within the window
 * (both endpoints inside it, as the reference reads them); `totalContentBytes` is the whole path's stored bytes.
 */
export async function recentHistory<K>(
  backend: PathBackend<K>,
  leafId: string | null | undefined,
  maxBytes: number,
  minRecent: number | undefined,
  compactions: () => Promise<StoredCompaction[]>,
): Promise<RecentHistoryResult> {
  const budget = byteBudget(maxBytes, minRecent);
  const leaf = await backend.leaf(leafId);
  if (!leaf) return { messages: [], truncated: false, totalContentBytes: 0 };
  const window: SessionMessage[] = [];
  let used = 0;
  let count = 0;
  let top = leaf.depth + 1;
  let bottom: K | null = leaf.key;
  walk: while (bottom !== null) {
    // Stored bytes are a lower bound of the read-back size: the walk never reads a row that cannot fit.
    const rows = await backend.read(bottom, {
      top: 0,
      rows: STEP_ROWS,
      maxBytes: boundBytes(Math.max(0, budget.maxBytes - used)),
      base: null,
      minRows: Math.max(0, budget.minRecent - count),
    });
    for (const row of rows) {
      const json = row.json ?? "";
      const size = readBackBytes(json, row.bytes);
      if (count >= budget.minRecent && used + size > budget.maxBytes) break walk;
      used += size;
      count++;
      top = row.depth;
      const message = parseMessage(json);
      if (message) window.push(message);
    }
    const last = rows[rows.length - 1];
    if (!last || rows.length < STEP_ROWS) break;
    bottom = last.depth > 0 ? last.parent : null;
  }
  window.reverse();
  const overlays = window.length > 0 ? await compactions() : [];
  const messages = await backend.hydrate(applyOverlays(window, overlays));
  return { messages, truncated: top > 0, totalContentBytes: leaf.cumBytes };
}
