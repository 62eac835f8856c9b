import type { StreamHead, StreamState } from "../contract/streams.js";

/** A kept stream's head row as the SQL backends store it (`updated_at` may come back as a string from pg). */
export interface StreamHeadRow {
  stream_id: string;
  state: StreamState;
  error: string | null;
  updated_at: string | number;
}

/** The head a stream's row describes. */
export function streamHead(row: StreamHeadRow): StreamHead {
  return { streamId: row.stream_id, state: row.state, error: row.error, updatedAt: Number(row.updated_at) };
}
