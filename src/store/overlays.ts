import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import { overlayMessage } from "../message/overlay.js";

/** Where a compaction lies on the path being read: its endpoints' depths, and its storage order. */
export interface OverlaySpan {
  fromDepth: number;
  toDepth: number;
  /** Storage order; a later overlay wins over an earlier one starting at the same message. */
  order: number;
}

/** A compaction whose both endpoints lie on the path being read, with their depths on that path. */
export interface OverlayCandidate extends OverlaySpan {
  compaction: StoredCompaction;
}

/**
 * Picks the overlays that apply to one path, exactly as the reference reads them: walking from the root, at the
 * first position where overlays start the newest one wins, its range is replaced, and overlays starting inside a
 * replaced range are ignored. `accept` can veto a candidate (e.g. one that turns out not to lie on the path).
 * Returns the chosen overlays in path order.
 */
export function chooseOverlays<C extends OverlaySpan>(
  candidates: readonly C[],
  accept: (candidate: C) => boolean = () => true,
): C[] {
  const sorted = candidates
    .filter((c) => c.fromDepth <= c.toDepth)
    .sort((a, b) => a.fromDepth - b.fromDepth || b.order - a.order);
  const chosen: C[] = [];
  let next = Number.NEGATIVE_INFINITY;
  for (const candidate of sorted) {
    // `accept` runs only for candidates that could still win, so costly path checks stay few.
    if (candidate.fromDepth < next || !accept(candidate)) continue;
    chosen.push(candidate);
    next = candidate.toDepth + 1;
  }
  return chosen;
}

/** Applies overlays to a fully read path (root first); `compactions` in storage order. */
export function applyOverlays(
  path: SessionMessage[],
  compactions: readonly StoredCompaction[],
): SessionMessage[] {
  if (compactions.length === 0 || path.length === 0) return path;
  const index = new Map<string, number>();
  for (const [i, message] of path.entries()) index.set(message.id, i);
  const candidates: OverlayCandidate[] = [];
  compactions.forEach((compaction, order) => {
    const fromDepth = index.get(compaction.fromMessageId);
    const toDepth = index.get(compaction.toMessageId);
    if (fromDepth !== undefined && toDepth !== undefined)
      candidates.push({ compaction, fromDepth, toDepth, order });
  });
  const chosen = chooseOverlays(candidates);
  if (chosen.length === 0) return path;
  const result: SessionMessage[] = [];
  let position = 0;
  for (const overlay of chosen) {
    for (let i = position; i < overlay.fromDepth; i++) result.push(path[i]!);
    result.push(overlayMessage(overlay.compaction));
    position = overlay.toDepth + 1;
  }
  for (let i = position; i < path.length; i++) result.push(path[i]!);
  return result;
}
