import type { Command } from "../command.js";
import { sessionBlocks } from "../inspect/blocks.js";
import { requireSession } from "../inspect/sessions.js";

/** `blocks`: a session's stored context blocks and frozen system prompt. */
export const blocks: Command = {
  name: "blocks",
  summary: "print a session's context blocks and frozen system prompt",
  description:
    "Prints the context blocks stored for a session (keys <label>_<session>, written by withContext blocks " +
    "without a provider and by the model's set_context tool) and its frozen system prompt (_system_prompt_<session>, " +
    "written by withCachedPrompt). Blocks served by an application's own provider live in the application and are " +
    "not shown.",
  positionals: ["<session>"],
  required: 1,
  options: {},
  examples: ["agent-session blocks demo-deploy"],
  async run({ args, out, open }) {
    const { store } = await open("read");
    const sessionId = args.positionals[0]!;
    await requireSession(store, sessionId);
    const result = await sessionBlocks(store, sessionId);
    if (out.json) return out.result(result);
    if (result.blocks.length === 0 && !result.prompt)
      return out.line(`Session ${sessionId} has no stored blocks.`);
    for (const block of result.blocks) {
      await out.line(`${block.label} (${block.key}, ~${block.tokens} tokens)`);
      for (const line of block.content.split("\n")) await out.line(`  ${line}`);
      if (block.reminder)
        await out.line("  (changed since the prompt was frozen: pending reminder or refresh)");
      await out.line();
    }
    if (result.prompt) {
      await out.line(`Frozen system prompt (${result.prompt.key}, ~${result.prompt.tokens} tokens)`);
      for (const line of result.prompt.content.split("\n")) await out.line(`  ${line}`);
    } else {
      await out.line("No frozen system prompt stored.");
    }
  },
};
