// Transfer items for bulk-loading benchmark stores through `transfer.importStream` (faster than appends).
import type { TransferItem } from "../src/contract/transfer.js";

/** The header item of a benchmark session (source "bench", no usage), to be followed by its messages. */
export function benchSessionItem(
  id: string,
  leafId: string,
  createdAt: string,
  updatedAt: string,
): TransferItem {
  return {
    kind: "session",
    session: {
      id,
      info: {
        id,
        name: id,
        parent_session_id: null,
        model: null,
        source: "bench",
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        estimated_cost: 0,
        end_reason: null,
        created_at: createdAt,
        updated_at: updatedAt,
      },
      leafId,
    },
  };
}
