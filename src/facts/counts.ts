// A learn's counts, and what a batch adds to them.
import type { Outcome } from "./consolidate.js";
import type { LearnCounts } from "./types.js";

/** Counts at zero. */
export function emptyCounts(): LearnCounts {
  return {
    messages: 0,
    batches: 0,
    added: 0,
    superseded: 0,
    invalidated: 0,
    duplicates: 0,
    refused: 0,
    failures: 0,
    skipped: [],
    busy: [],
    encrypted: [],
  };
}

/** Counts one consolidated fact: a fact that supersedes another is stored too, so it counts as added. */
export function countOutcome(counts: LearnCounts, outcome: Outcome): void {
  if (outcome === "duplicate") counts.duplicates++;
  else if (outcome === "invalidated") counts.invalidated++;
  else {
    counts.added++;
    if (outcome === "superseded") counts.superseded++;
  }
}
