/**
 * Adoption of the reference's `assistant_sessions` rows (see adopt.ts): a row becomes our registry row when the
 * registry's own input rules accept it, else it is reported and left in place; an adopted row is compared after.
 */

import type { SessionInfo } from "../../contract/registry.js";
import { SessionError } from "../../errors.js";
import { assertSessionId } from "../../message/ids.js";
import { finiteNumber, registryText, wholeCount } from "../registry-schema.js";
import { type AdoptionReport, assertReadBack, compareReadBack, referenceTime, refusal } from "./adopt.js";

/**
 * A reference `assistant_sessions` row as our registry row (the reference has no cache counters: 0), or why the
 * registry cannot hold it: the reference stores any text and any number (`addUsage(id, 0.5, …)`), the registry
 * only well-formed text without U+0000, whole token counts and a finite cost (its own input rules). A missing
 * count is 0.
 */
export function referenceSessionInfo(row: Record<string, unknown>, now: string): SessionInfo | string {
  const text = (value: unknown, field: string) =>
    value === null || value === undefined ? null : registryText(value, field);
  const count = (value: unknown, field: string, rule = wholeCount) =>
    value === null || value === undefined ? 0 : rule(Number(value), field);
  let info: SessionInfo | undefined;
  const why = refusal(() => {
    if (typeof row.id !== "string" || row.id === "")
      throw new SessionError("INVALID_ARGUMENT", "no id", {
        issues: [
          {
            path: "id",
            rule: row.id === undefined || row.id === null || row.id === "" ? "required" : "type",
          },
        ],
      });
    assertSessionId(row.id);
    const cost = count(row.estimated_cost, "estimated_cost", finiteNumber);
    info = {
      id: row.id,
      name: typeof row.name === "string" ? registryText(row.name, "A session name", "name") : "",
      parent_session_id: text(row.parent_session_id, "parent_session_id"),
      model: text(row.model, "model"),
      source: text(row.source, "source"),
      input_tokens: count(row.input_tokens, "input_tokens"),
      output_tokens: count(row.output_tokens, "output_tokens"),
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      estimated_cost: cost,
      end_reason: text(row.end_reason, "end_reason"),
      created_at: referenceTime(row.created_at, now),
      updated_at: referenceTime(row.updated_at, now),
    };
  });
  return info ?? why ?? "no id";
}

/**
 * Compares an adopted registry row with the stored one: name, fork parent, model, source and creation time must be
 * the reference's, and usage at least the reference's (ours only grows once the session is used again); an
 * `end_reason` set since is not a difference. A row that was written but cannot be read back fails the adoption.
 */
export function compareRegistryRow(
  report: AdoptionReport,
  written: SessionInfo,
  stored: SessionInfo | null | undefined,
): void {
  if (!stored) {
    assertReadBack(1, "registry row(s)", written.id);
    return;
  }
  const same =
    stored.name === written.name &&
    stored.parent_session_id === written.parent_session_id &&
    stored.model === written.model &&
    stored.source === written.source &&
    stored.created_at === written.created_at &&
    (written.end_reason === null || stored.end_reason === written.end_reason) &&
    stored.input_tokens >= written.input_tokens &&
    stored.output_tokens >= written.output_tokens &&
    stored.estimated_cost >= written.estimated_cost;
  compareReadBack(report, "same", same ? "same" : "other", `assistant_sessions:${written.id}`);
}
