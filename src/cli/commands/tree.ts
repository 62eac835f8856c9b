import type { Command } from "../command.js";
import { requireSession } from "../inspect/sessions.js";
import { activeIds, leafIds, loadTree } from "../inspect/tree.js";
import { counted } from "../output.js";
import { renderTree } from "../render/tree-text.js";

/** `tree`: the branch structure of a session. */
export const tree: Command = {
  name: "tree",
  summary: "draw a session's branch structure",
  description:
    "Draws every message of a session as a tree: regenerated answers and edits are branches. ● marks the active " +
    "path (root to the latest leaf), ○ other branches; overlays are noted on the message where they start. Read " +
    "another branch with 'show <session> --leaf <id>'.",
  positionals: ["<session>"],
  required: 1,
  options: {},
  examples: ["agent-session tree demo-deploy"],
  async run({ args, out, open }) {
    const { store } = await open("read");
    const sessionId = args.positionals[0]!;
    await requireSession(store, sessionId);
    const loaded = await loadTree(store, sessionId);
    if (out.json) {
      const active = activeIds(loaded);
      return out.result({
        sessionId,
        leafId: loaded.leafId,
        leaves: leafIds(loaded),
        nodes: [...loaded.nodes.values()].map((n) => ({
          id: n.id,
          parentId: n.parentId,
          role: n.role,
          createdAt: n.createdAt,
          text: n.text,
          children: n.children,
          onActivePath: active.has(n.id),
        })),
        compactions: loaded.compactions,
      });
    }
    if (loaded.nodes.size === 0) return out.line(`Session ${sessionId} holds no messages.`);
    for (const line of renderTree(loaded)) await out.line(line);
    const leaves = leafIds(loaded).length;
    await out.line();
    await out.line(
      `${counted(loaded.nodes.size, "message")}, ${counted(leaves, "branch", "branches")}, latest leaf ${loaded.leafId}`,
    );
  },
};
