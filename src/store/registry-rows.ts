import type { SessionInfo } from "../contract/registry.js";

/** A registry row as SQL drivers return it: counters may come back as bigints (node:sqlite) or strings (pg). */
export type SessionInfoRow = {
  [K in keyof Omit<SessionInfo, "owner" | "pinned">]: SessionInfo[K] extends number
    ? number | bigint | string
    : SessionInfo[K];
} & { owner?: string | null; pinned?: boolean | number | bigint | null };

/** Converts a registry row to a plain {@link SessionInfo} with numeric counters (drivers differ in number types). */
export function toSessionInfo(row: SessionInfoRow): SessionInfo {
  const info: SessionInfo = {
    id: row.id,
    name: row.name,
    parent_session_id: row.parent_session_id,
    model: row.model,
    source: row.source,
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    cache_read_tokens: Number(row.cache_read_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    estimated_cost: Number(row.estimated_cost),
    end_reason: row.end_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
  // Absent, not null, when the session has no owner: rows from before owners existed read as they did.
  if (typeof row.owner === "string") info.owner = row.owner;
  // Absent when not pinned, as `owner`: SQLite answers 0/1, Postgres a boolean.
  if (row.pinned === true || Number(row.pinned ?? 0) === 1) info.pinned = true;
  return info;
}

/** An imported registry row's values, `id` through `owner` in column order, times bound by `time` (as they are). */
export function sessionInfoValues(
  info: SessionInfo,
  time: (value: string, column: "created_at" | "updated_at") => string = (value) => value,
): (string | number | null)[] {
  return [
    info.id,
    info.name,
    info.parent_session_id,
    info.model,
    info.source,
    info.input_tokens,
    info.output_tokens,
    info.cache_read_tokens,
    info.cache_write_tokens,
    info.estimated_cost,
    info.end_reason,
    time(info.created_at, "created_at"),
    time(info.updated_at, "updated_at"),
    info.owner ?? null,
  ];
}
