import type { SessionMessage } from "../../../contract/message.js";
import { parseMessage, SEALED_PREFIX } from "../../../message/json.js";
import { planPathChecks } from "../../../search/on-path.js";
import { contentSql, resolveContent } from "./chunks.js";
import type { SqlDriver } from "./driver.js";

/** The tree columns of one message row. */
export interface NodeRow {
  seq: number;
  parent_seq: number | null;
  depth: number;
  jump_seq: number | null;
  jump_depth: number;
  bytes: number;
  cum_bytes: number;
  tokens: number;
  cum_tokens: number;
}

const NODE_COLUMNS = "seq, parent_seq, depth, jump_seq, jump_depth, bytes, cum_bytes, tokens, cum_tokens";
const NODE_BY_SEQ = `SELECT ${NODE_COLUMNS} FROM agent_messages WHERE seq = ?`;
const NODE_BY_ID = `SELECT ${NODE_COLUMNS} FROM agent_messages WHERE session_num = ? AND id = ?`;

/** Reads the tree columns of a row by its sequence number. */
export function nodeBySeq(driver: SqlDriver, seq: number): NodeRow | undefined {
  return driver.get<NodeRow>(NODE_BY_SEQ, [seq]);
}

/** Reads the tree columns of a message of one session by its id. */
export function nodeById(driver: SqlDriver, sessionNum: number, id: string): NodeRow | undefined {
  return driver.get<NodeRow>(NODE_BY_ID, [sessionNum, id]);
}

/** The jump fields of a row: where its skip pointer leads. */
export interface JumpFields {
  jump_seq: number | null;
  jump_depth: number;
}

/** A row's position in the tree: its key, depth and skip pointer. */
export interface JumpNode extends JumpFields {
  seq: number;
  depth: number;
}

/**
 * The skip pointer of a new child of `parent` (Myers' skew-binary jump pointers): with it any ancestor at a given
 * depth is found in O(log depth) row reads. `target` is the row the parent's own pointer leads to (the parent
 * itself when it has none; undefined when that row is missing).
 */
export function childJump(parent: JumpNode, target: JumpFields | undefined): { seq: number; depth: number } {
  if (!target) return { seq: parent.seq, depth: parent.depth };
  const jSeq = parent.jump_seq ?? parent.seq;
  const jDepth = parent.jump_seq === null ? parent.depth : parent.jump_depth;
  const jjSeq = target.jump_seq ?? jSeq;
  const jjDepth = target.jump_seq === null ? jDepth : target.jump_depth;
  if (parent.depth - jDepth === jDepth - jjDepth) return { seq: jjSeq, depth: jjDepth };
  return { seq: parent.seq, depth: parent.depth };
}

/** The skip pointer of a new child of `parent`, reading the parent's jump target (one row read). */
export function jumpFor(driver: SqlDriver, parent: NodeRow): { seq: number; depth: number } {
  return childJump(parent, parent.jump_seq === null ? parent : nodeBySeq(driver, parent.jump_seq));
}

/** The ancestor of `node` (or the node itself) at `depth`, or undefined when `depth` is out of range. */
export function ancestorAt(driver: SqlDriver, node: NodeRow, depth: number): NodeRow | undefined {
  if (depth > node.depth || depth < 0) return undefined;
  let current: NodeRow | undefined = node;
  while (current && current.depth > depth) {
    const next: number | null =
      current.jump_seq !== null && current.jump_depth >= depth ? current.jump_seq : current.parent_seq;
    current = next === null ? undefined : nodeBySeq(driver, next);
  }
  return current;
}

// Whether messages lie on the path from the root to a leaf ([seq, leaf seq] pairs as JSON): the leaf's ancestor at
// each message's depth, reached by skip pointers as ancestorAt does, one climb per leaf and depth (messages of
// sibling branches share their depth). Every step goes to a shallower row, so a corrupt pointer cannot loop.
const ON_PATHS = `WITH RECURSIVE
  pairs(k, target, leaf) AS MATERIALIZED (
    SELECT m.seq, m.depth, json_extract(j.value, '$[1]') FROM json_each(?) j
      JOIN agent_messages m ON m.seq = json_extract(j.value, '$[0]')
  ),
  walk(leaf, target, seq, depth, jump_seq, jump_depth, parent_seq) AS (
    SELECT t.leaf, t.target, l.seq, l.depth, l.jump_seq, l.jump_depth, l.parent_seq
      FROM (SELECT DISTINCT leaf, target FROM pairs) t JOIN agent_messages l ON l.seq = t.leaf
    UNION ALL
    SELECT w.leaf, w.target, m.seq, m.depth, m.jump_seq, m.jump_depth, m.parent_seq FROM walk w JOIN agent_messages m
      ON m.seq = CASE WHEN w.jump_seq IS NOT NULL AND w.jump_depth >= w.target THEN w.jump_seq ELSE w.parent_seq END
      WHERE w.depth > w.target AND m.depth < w.depth
  ) SELECT p.k FROM walk w JOIN pairs p ON p.k = w.seq AND p.leaf = w.leaf WHERE w.depth = w.target`;

// The seqs of a whole path, leaf first: one row per message, no restarts; each step to a shallower row, so a corrupt
// link cannot loop.
/** The seqs of the path from the message `?` to its root (a depth guard stops a damaged cycle). */
export const PATH_SEQS = `WITH RECURSIVE path(seq, parent_seq, depth) AS (
    SELECT seq, parent_seq, depth FROM agent_messages WHERE seq = ?
    UNION ALL SELECT m.seq, m.parent_seq, m.depth FROM path p JOIN agent_messages m ON m.seq = p.parent_seq
      WHERE m.depth < p.depth
  ) SELECT seq FROM path`;

/**
 * The seqs of the active paths of the sessions `?` (a JSON array of session numbers): each walked once from its
 * head's leaf to the root, as PATH_SEQS walks one.
 */
export const ACTIVE_PATHS_SEQS = `WITH RECURSIVE path(seq, parent_seq, depth) AS (
    SELECT l.seq, l.parent_seq, l.depth FROM json_each(?) j JOIN agent_session_heads h ON h.num = j.value
      JOIN agent_messages l ON l.seq = h.leaf_seq
    UNION ALL SELECT m.seq, m.parent_seq, m.depth FROM path p JOIN agent_messages m ON m.seq = p.parent_seq
      WHERE m.depth < p.depth
  ) SELECT seq FROM path`;

/**
 * The messages among `pairs` ([seq, leaf seq], each message once) that lie on the path to their leaf, in one
 * statement per strategy: a search that keeps to active paths checks up to thousands of candidates, and a statement
 * each cost ~10 us. Where `leafDepths` knows a leaf's depth, whether its path is read once or climbed per message is
 * search/on-path.ts's rule, the same as Postgres's.
 */
export function onPaths(
  driver: SqlDriver,
  pairs: readonly (readonly [number, number])[],
  leafDepths?: ReadonlyMap<number, number>,
): Set<number> {
  const on = new Set<number>();
  const { walks, climbs } = planPathChecks(
    pairs.map(([seq, leaf]) => ({ seq, leaf, leafDepth: leafDepths?.get(leaf) })),
  );
  for (const { leaf, checks } of walks) {
    const path = new Set(driver.column<number>(PATH_SEQS, [leaf]));
    for (const { seq } of checks) if (path.has(seq)) on.add(seq);
  }
  if (climbs.length > 0) {
    const json = JSON.stringify(climbs.map(({ seq, leaf }) => [seq, leaf]));
    for (const seq of driver.column<number>(ON_PATHS, [json])) on.add(seq);
  }
  return on;
}

/** True when `ancestor` lies on the path from the root to `node` (a node is its own ancestor). */
export function isAncestor(driver: SqlDriver, ancestor: NodeRow, node: NodeRow): boolean {
  return ancestorAt(driver, node, ancestor.depth)?.seq === ancestor.seq;
}

// The whole path (to the root) and a segment of it (down from a depth): the walk carries only what it returns —
// each row's content, or for a message split across continuation rows its seq (sql/engines/sqlite/chunks.ts).
const PATH_TO_ROOT = `WITH RECURSIVE path(parent_seq, content) AS (
  SELECT parent_seq, ${contentSql()} FROM agent_messages WHERE seq = ?
  UNION ALL
  SELECT m.parent_seq, ${contentSql("m")} FROM agent_messages m JOIN path p ON m.seq = p.parent_seq
) SELECT content FROM path`;
const PATH_TO_DEPTH = `WITH RECURSIVE path(parent_seq, content) AS (
  SELECT parent_seq, ${contentSql()} FROM agent_messages WHERE seq = ? AND depth >= ?
  UNION ALL
  SELECT m.parent_seq, ${contentSql("m")} FROM agent_messages m JOIN path p ON m.seq = p.parent_seq WHERE m.depth >= ?
) SELECT content FROM path`;

/**
 * Reads the path segment from `bottomSeq` up to `topDepth` (inclusive), root first, with one recursive query that
 * touches only the returned rows. Corrupt rows are skipped.
 */
export function readSegment(
  driver: SqlDriver,
  sessionId: string,
  bottomSeq: number,
  topDepth: number,
): SessionMessage[] {
  const contents =
    topDepth > 0
      ? driver.column<string | number>(PATH_TO_DEPTH, [bottomSeq, topDepth, topDepth])
      : driver.column<string | number>(PATH_TO_ROOT, [bottomSeq]);
  // Parsed in the order the walk returned them (leaf first) and reversed after: parsing in allocation order is
  // ~30 % faster on long paths than walking the strings backwards.
  const messages: SessionMessage[] = [];
  for (const content of contents) {
    // Sealed content (an encrypted owner's) and split rows go the long way; the rest is parsed as it is.
    const plain = typeof content === "string" && !content.startsWith(SEALED_PREFIX);
    const message = parseMessage(plain ? content : resolveContent(driver, content, sessionId));
    if (message) messages.push(message);
  }
  return messages.reverse();
}

/**
 * Recomputes depth, skip pointer and running totals of the subtree under `rootSeq` after its parent changed
 * (splice on delete) or one of its rows changed size (update). Costs O(subtree), top-down so that every
 * row's parent and jump target are already correct when it is visited. Visited rows are added to `visited`.
 */
export function rebuildSubtree(driver: SqlDriver, rootSeq: number, visited: Set<number>): void {
  const order = driver.all<{ seq: number }>(
    `WITH RECURSIVE sub(seq, level) AS (
       SELECT ?, 0
       UNION ALL
       SELECT m.seq, sub.level + 1 FROM agent_messages m JOIN sub ON m.parent_seq = sub.seq
     ) SELECT seq FROM sub ORDER BY level`,
    [rootSeq],
  );
  for (const { seq } of order) {
    visited.add(seq);
    const node = nodeBySeq(driver, seq);
    if (!node) continue;
    const parent = node.parent_seq === null ? undefined : nodeBySeq(driver, node.parent_seq);
    if (!parent) {
      driver.run(
        "UPDATE agent_messages SET depth = 0, jump_seq = NULL, jump_depth = 0, cum_bytes = bytes, cum_tokens = tokens WHERE seq = ?",
        [seq],
      );
      continue;
    }
    const jump = jumpFor(driver, parent);
    driver.run(
      "UPDATE agent_messages SET depth = ?, jump_seq = ?, jump_depth = ?, cum_bytes = ?, cum_tokens = ? WHERE seq = ?",
      [
        parent.depth + 1,
        jump.seq,
        jump.depth,
        parent.cum_bytes + node.bytes,
        parent.cum_tokens + node.tokens,
        seq,
      ],
    );
  }
}
