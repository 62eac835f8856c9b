import type { Command } from "../command.js";
import { DEFAULT_DB } from "../store.js";

// In a checkout the CLI runs from its TypeScript sources (`npm run cli`), where `agent-session` is not on PATH.
const RUN = import.meta.url.endsWith(".ts") ? "npm run cli --" : "agent-session";

/** `demo`: a sample store to explore the other commands and the viewer with. */
export const demo: Command = {
  name: "demo",
  summary: "create a sample store (branches, overlays, blocks, several sessions)",
  description:
    "Writes sample sessions through the library's public API into --db (created when missing): a planning " +
    "conversation with a regenerated answer, an edited question, a tool call, a compaction overlay, a memory block " +
    "and a frozen system prompt; a trip plan with reasoning and a tool call; a follow-up session linked to the first; " +
    "and an unregistered session. Ids are fixed, and sessions that already exist are left alone, so running it " +
    "again is safe and fast.",
  positionals: [],
  required: 0,
  options: {},
  examples: ["agent-session demo && agent-session serve", "agent-session demo --db /tmp/demo.db"],
  async run({ out, open, db }) {
    const { store, location } = await open("write");
    const { seedDemo } = await import("../demo/seed.js");
    const sessions = await seedDemo(store);
    if (out.json) return out.result({ database: location, sessions });
    const made = sessions.filter((s) => s.created).length;
    await out.line(
      made === 0
        ? `The demo sessions are already in ${location}; nothing was written.`
        : `Wrote ${made} demo sessions to ${location}.`,
    );
    // The --db value is not echoed: a Postgres URL may carry a password.
    const same = db === DEFAULT_DB ? "" : " (with the same --db)";
    await out.line(`Next${same}: ${RUN} ls · ${RUN} tree demo-deploy · ${RUN} serve`);
  },
};
