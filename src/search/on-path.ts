/**
 * Whether a hit lies on its session's active path, the rule every backend applies before its SQL: a session whose
 * message count is its path's length has no other branch (all its messages lie on the path), a message deeper than
 * the leaf cannot lie on it, and the rest are checked against the tree: a skip-pointer climb from the leaf per
 * message (O(log depth) rows), or one read of the whole path (depth + 1 rows) where the climbs would cost more.
 */

/**
 * Whether a session has messages off its active path (its message count exceeds the path's length), or no leaf.
 * Positional, not a head object: it runs per candidate on a search's hot path.
 */
export function hasOtherBranches(
  leafSeq: number | null,
  leafDepth: number | null,
  messageCount: number,
): boolean {
  return leafSeq === null || leafDepth === null || messageCount !== leafDepth + 1;
}

/**
 * How many messages a session's active path holds (its leaf's depth + 1; none without a leaf): what an
 * active-branch search of one session counts a term's rarity among, so a branch it left changes no weight.
 */
export function activePathLength(leafSeq: number | null, leafDepth: number | null): number {
  return leafSeq === null || leafDepth === null ? 0 : leafDepth + 1;
}

/**
 * Whether a message lies on its session's active path when its head alone tells (never without a leaf, always in
 * a session without other branches, never deeper than the leaf: `depth` where known); undefined: the tree must say.
 */
export function onPathByHead(
  leafSeq: number | null,
  leafDepth: number | null,
  branched: boolean,
  depth?: number,
): boolean | undefined {
  if (leafSeq === null || leafDepth === null) return false;
  if (!branched) return true;
  if (depth !== undefined && depth > leafDepth) return false;
  return undefined;
}

/** A message to check against its session's active path: its seq, and its session's leaf and the leaf's depth. */
export interface PathCheck {
  seq: number;
  leaf: number;
  /** Undefined where not read: its messages are climbed. */
  leafDepth: number | undefined;
}

/** How a set of messages is checked: the paths read whole (each leaf with its messages), the messages climbed. */
export interface PathChecks<T extends PathCheck> {
  walks: { leaf: number; leafDepth: number; checks: T[] }[];
  climbs: T[];
}

/**
 * Groups `checks` by leaf and reads a leaf's path whole where its messages' climbs cost more rows than the path
 * holds (checks × log2(depth + 2) > depth + 1), else climbs for each: a path read once where its session's
 * messages are many for it.
 */
export function planPathChecks<T extends PathCheck>(checks: Iterable<T>): PathChecks<T> {
  const byLeaf = new Map<number, { leafDepth: number | undefined; checks: T[] }>();
  for (const check of checks) {
    const group = byLeaf.get(check.leaf);
    if (group === undefined) byLeaf.set(check.leaf, { leafDepth: check.leafDepth, checks: [check] });
    else group.checks.push(check);
  }
  const plan: PathChecks<T> = { walks: [], climbs: [] };
  for (const [leaf, { leafDepth, checks: group }] of byLeaf) {
    if (leafDepth !== undefined && group.length * Math.log2(leafDepth + 2) > leafDepth + 1)
      plan.walks.push({ leaf, leafDepth, checks: group });
    else plan.climbs.push(...group);
  }
  return plan;
}
