import { activeIds, type SessionTree, type TreeNode } from "../inspect/tree.js";
import { preview } from "../output.js";
import { partText } from "./message.js";

interface Frame {
  id: string;
  /** Drawn before the node: the indent of its parent's branch plus its own connector. */
  lead: string;
  /** The indent its children start from. */
  indent: string;
}

function label(
  node: TreeNode,
  active: Set<string>,
  leafId: string | null,
  overlays: Map<string, string[]>,
): string {
  const text = node.text || (node.message?.parts ?? []).map(partText).join(" ") || "(unreadable row)";
  const marks = [
    node.id === leafId ? "◀ latest leaf" : node.children.length === 0 ? "(leaf)" : "",
    ...(overlays.get(node.id) ?? []),
  ].filter(Boolean);
  const dot = active.has(node.id) ? "●" : "○";
  return `${dot} ${node.id} ${node.role}: ${preview(text, 60)}${marks.length > 0 ? `  ${marks.join(" ")}` : ""}`;
}

/**
 * Draws a session's message tree. A chain without branches stays in one column; where a message has several
 * children each gets a `├─`/`└─` connector and its own indented column. ● marks the active path (root to the
 * latest leaf), ○ the other branches; overlays are noted on the message they start at.
 */
export function renderTree(tree: SessionTree): string[] {
  const active = activeIds(tree);
  const overlays = new Map<string, string[]>();
  for (const c of tree.compactions) {
    const notes = overlays.get(c.fromMessageId) ?? [];
    notes.push(`[overlay ${c.id.slice(0, 8)} → ${c.toMessageId}]`);
    overlays.set(c.fromMessageId, notes);
  }
  const lines: string[] = [];
  const several = tree.roots.length > 1;
  // An explicit stack, not recursion: a long conversation is a chain thousands of messages deep.
  const stack: Frame[] = tree.roots
    .map((id, i, all) => branchFrame(id, "", several, i === all.length - 1))
    .reverse();
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = tree.nodes.get(frame.id);
    if (!node) continue;
    lines.push(`${frame.lead}${label(node, active, tree.leafId, overlays)}`);
    if (node.children.length === 1) {
      stack.push({ id: node.children[0]!, lead: frame.indent, indent: frame.indent });
      continue;
    }
    for (let i = node.children.length - 1; i >= 0; i--) {
      stack.push(branchFrame(node.children[i]!, frame.indent, true, i === node.children.length - 1));
    }
  }
  return lines;
}

function branchFrame(id: string, indent: string, branched: boolean, last: boolean): Frame {
  if (!branched) return { id, lead: indent, indent };
  return { id, lead: `${indent}${last ? "└─ " : "├─ "}`, indent: `${indent}${last ? "   " : "│  "}` };
}
