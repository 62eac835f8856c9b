/**
 * Which of a hit's overlays first holds it (search/overlay-marks.ts's `firstCovering`), for a whole page in at most
 * two statements. Checked pair by pair, a climb of a statement a step, a page of hits on forks at one message, an
 * overlay on each fork, cost thousands of statements (100 forks, 200 hits: 5,357 for one search).
 */
import type { CoverCheck } from "../../search/overlay-marks.js";
import type { SqlDriver } from "../connection/driver.js";

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
 * For each check, the index of the first of its overlays that holds its hit, or undefined. The newest overlay of
 * each check first, in one statement: on a path without branches every overlay whose depths span a hit holds it,
 * so that one is the answer and the older ones would be climbed for nothing. The rest of the unmarked hits' in one
 * more.
 */
export function firstCovering(
  driver: SqlDriver,
  checks: readonly CoverCheck<OverlayNode>[],
): (number | undefined)[] {
  const found = covering(
    driver,
    checks.map(({ hit, overlays }) => ({ hit, overlays: overlays.slice(0, 1) })),
  );
  const rest = checks.flatMap(({ hit, overlays }, i) =>
    found[i] === undefined && overlays.length > 1 ? [{ i, hit, overlays: overlays.slice(1) }] : [],
  );
  const older = covering(driver, rest);
  rest.forEach(({ i }, r) => {
    const k = older[r];
    if (k !== undefined) found[i] = k + 1;
  });
  return found;
}

/**
 * For each check, the first of its overlays that holds its hit, every pair checked in one statement by two climbs
 * (as Postgres's firstCovering does): the hit's ancestor at the overlay's first message's depth must be that
 * message, and the overlay's last message's ancestor at the hit's depth the hit. Equal climbs are made once.
 */
function covering(driver: SqlDriver, checks: readonly CoverCheck<OverlayNode>[]): (number | undefined)[] {
  if (checks.length === 0) return [];
  const anchors: [target: number, start: number][] = [];
  const anchorOf = new Map<string, number>();
  const climb = (target: number, start: number) => {
    const key = `${start}/${target}`;
    let k = anchorOf.get(key);
    if (k === undefined) {
      k = anchors.push([target, start]) - 1;
      anchorOf.set(key, k);
    }
    return k;
  };
  // Every SQLite hit has its depth (search/page.ts reads it).
  const pairs = checks.map(({ hit, overlays }) =>
    overlays.map(({ from, to }) => ({ up: climb(from.depth, hit.seq), down: climb(hit.depth!, to.seq) })),
  );
  const reached = new Map(driver.tuples<[number, number]>(CLIMBS, [JSON.stringify(anchors)]));
  return checks.map(({ hit, overlays }, i) => {
    const k = pairs[i]!.findIndex(
      ({ up, down }, j) => reached.get(up) === overlays[j]!.from.seq && reached.get(down) === hit.seq,
    );
    return k < 0 ? undefined : k;
  });
}
