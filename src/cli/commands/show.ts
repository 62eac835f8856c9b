import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { readHistory } from "../inspect/history.js";
import { requireSession } from "../inspect/sessions.js";
import { counted, shortTime } from "../output.js";
import { messageLines } from "../render/message.js";

/** `show`: one branch of a session, as the model reads it or as stored. */
export const show: Command = {
  name: "show",
  summary: "print one branch of a session (overlays applied, or --raw)",
  description:
    "Prints the history of a session along one branch: by default the latest leaf's branch exactly as the model " +
    "reads it, with compaction overlays applied (each overlay says which stored messages it replaces). --leaf " +
    "picks another branch by the id of its last message (see 'tree'); --raw prints the stored messages of the " +
    "branch without applying overlays. With --json every message is printed whole.",
  positionals: ["<session>"],
  required: 1,
  options: {
    leaf: {
      type: "string",
      value: "<id>",
      description: "the branch ending at this message (default: latest leaf)",
    },
    raw: { type: "boolean", description: "the stored messages, overlays not applied" },
  },
  examples: ["agent-session show demo-deploy", "agent-session show demo-deploy --leaf a1 --raw"],
  async run({ args, out, open }) {
    const { store } = await open("read");
    const sessionId = args.positionals[0]!;
    const summary = await requireSession(store, sessionId);
    const view = await readHistory(store, sessionId, {
      leafId: stringOption(args.values, "leaf"),
      raw: args.values.raw === true,
    });
    if (out.json) return out.result({ session: summary, ...view });
    const title = summary.name ? ` "${summary.name}"` : "";
    const mode = view.raw ? "stored messages, overlays not applied" : "as the model reads it";
    await out.line(
      `Session ${sessionId}${title}: branch to ${view.leafId ?? "(empty)"}, ${counted(view.entries.length, "message")}, ${mode}`,
    );
    const usage = summary.usage;
    if (usage && (usage.inputTokens > 0 || usage.outputTokens > 0 || usage.cost > 0)) {
      // Recorded usage (an agent session's ledger totals, or SessionManager's addUsage).
      const cache = `${usage.cacheReadTokens} cache read, ${usage.cacheWriteTokens} cache write`;
      await out.line(
        `Usage: ${usage.inputTokens} input (${cache}), ${usage.outputTokens} output tokens, $${usage.cost.toFixed(4)}`,
      );
    }
    for (const entry of view.entries) {
      await out.line();
      if (entry.overlay) {
        const covered = entry.overlay.covered?.length;
        const range = `${entry.overlay.fromMessageId} … ${entry.overlay.toMessageId}`;
        await out.line(
          `[${shortTime(entry.createdAt)}] overlay ${entry.overlay.compactionId} replaces ${range}` +
            (covered === undefined ? "" : ` (${covered} stored messages; see them with --raw)`),
        );
      } else {
        await out.line(`[${shortTime(entry.createdAt)}] ${entry.role} ${entry.id}`);
      }
      for (const line of messageLines(entry.message)) await out.line(`  ${line}`);
    }
  },
};
