/**
 * Which of a hit's overlays first holds it (search/overlay-marks.ts's `firstCovering`), for a whole page in at most
 * three statements, whatever the number of overlays and hits: checked pair by pair, with a statement per climbing
 * step, a page of hits on forks at one message with an overlay on each fork costs thousands (100 forks, 200 hits:
 * 5,357 statements for one search; test/sqlite-overlay-marks.test.ts counts them).
 */
import type { CoverCheck } from "../../search/overlay-marks.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";

/** An overlay's first or last message as the climbs need it. */
export interface OverlayNode {
  seq: number;
  depth: number;
}

// The ancestor of each start row at its target depth ([target, start] pairs as JSON; rows: the pair's index and
// the ancestor's seq), climbed by skip pointers as tree.ts's ancestorAt does: O(log depth) rows a pair. Every step
// goes to a shallower row, so a corrupt pointer cannot loop; a target deeper than its start gives no row.
const CLIMBS = `WITH RECURSIVE
  climb(k, target, seq, depth, parent_seq, jump_seq, jump_depth) AS (
    SELECT j.key, json_extract(j.value, '$[0]'), m.seq, m.depth, m.parent_seq, m.jump_seq, m.jump_depth
      FROM json_each(?) j JOIN agent_messages m ON m.seq = json_extract(j.value, '$[1]')
    UNION ALL
    SELECT c.k, c.target, m.seq, m.depth, m.parent_seq, m.jump_seq, m.jump_depth FROM climb c JOIN agent_messages m
      ON m.seq = CASE WHEN c.jump_seq IS NOT NULL AND c.jump_depth >= c.target THEN c.jump_seq ELSE c.parent_seq END
      WHERE c.depth > c.target AND m.depth < c.depth
  ) SELECT k, seq FROM climb WHERE depth = target`;

/**
 * For each check, the index of the first of its overlays that holds its hit, or undefined: the overlay's first
 * message is the hit's ancestor at its depth, and the hit its last message's ancestor at the hit's depth. Three
 * statements at most, each climbing for many pairs at once (equal climbs made once):
 * - each check's newest overlay: on a path without branches every overlay whose depths span a hit holds it, so it
 *   is the answer and older ones would be climbed for nothing (250 nested overlays, 200 hits: a search took
 *   126 ms with every pair climbed at once, 7 ms so);
 * - for the hits left unmarked, the climbs from the hit to its other overlays' first messages' depths: few, as
 *   overlays share first messages (nested ones) or depths (one on each fork at a message);
 * - the climbs from the last messages of the overlays whose first message passed, at the hit's depth.
 */
export function firstCovering(
  driver: SqlDriver,
  checks: readonly CoverCheck<OverlayNode>[],
): (number | undefined)[] {
  const newest = new Climbs();
  // Every SQLite hit has its depth (search/page.ts reads it), and every check an overlay (markOverlays).
  const asked = checks.map(({ hit, overlays: [overlay] }) => ({
    up: newest.ask(overlay!.from.depth, hit.seq),
    down: newest.ask(hit.depth!, overlay!.to.seq),
  }));
  newest.run(driver);
  const found = checks.map(({ hit, overlays: [overlay] }, i): number | undefined => {
    const { up, down } = asked[i]!;
    return newest.at(up) === overlay!.from.seq && newest.at(down) === hit.seq ? 0 : undefined;
  });
  const rest = checks.flatMap(({ hit, overlays }, i) =>
    found[i] === undefined && overlays.length > 1 ? [{ i, hit, overlays }] : [],
  );
  const ups = new Climbs();
  const up = rest.map(({ hit, overlays }) =>
    overlays.map(({ from }, j) => (j > 0 ? ups.ask(from.depth, hit.seq) : -1)),
  );
  ups.run(driver);
  const downs = new Climbs();
  const down = rest.map(({ hit, overlays }, r) =>
    overlays.map(({ from, to }, j) =>
      j > 0 && ups.at(up[r]![j]!) === from.seq ? downs.ask(hit.depth!, to.seq) : -1,
    ),
  );
  downs.run(driver);
  rest.forEach(({ i, hit }, r) => {
    const k = down[r]!.findIndex((climb) => climb >= 0 && downs.at(climb) === hit.seq);
    if (k >= 0) found[i] = k;
  });
  return found;
}

/** Climbs asked for one by one, each distinct one made once, all in one statement. */
class Climbs {
  private readonly anchors: [target: number, start: number][] = [];
  private readonly byTarget = new Map<number, Map<number, number>>();
  private reached = new Map<number, number>();

  /** Asks for the ancestor of the row `start` at depth `target`; returns the climb's number. */
  ask(target: number, start: number): number {
    let byStart = this.byTarget.get(target);
    if (byStart === undefined) {
      byStart = new Map();
      this.byTarget.set(target, byStart);
    }
    let k = byStart.get(start);
    if (k === undefined) {
      k = this.anchors.push([target, start]) - 1;
      byStart.set(start, k);
    }
    return k;
  }

  /** Makes every climb asked for (none: no statement). */
  run(driver: SqlDriver): void {
    if (this.anchors.length === 0) return;
    this.reached = new Map(driver.tuples<[number, number]>(CLIMBS, [JSON.stringify(this.anchors)]));
  }

  /** The seq a climb reached, undefined when the start row is gone or the target deeper than it. */
  at(k: number): number | undefined {
    return this.reached.get(k);
  }
}
