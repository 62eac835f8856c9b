import type { SessionMessage, SessionMessagePart } from "../../contract/message.js";

/** A message to append under `parent` (omitted: after the previous one; `null`: a new root). */
export interface DemoStep {
  message: SessionMessage;
  parent?: string | null;
}

/** One sample session: its registry row, its messages in append order, and what else to store for it. */
export interface DemoSession {
  id: string;
  name: string;
  model: string;
  parentSessionId?: string;
  steps: DemoStep[];
  /** Replace this inclusive range of the first branch with a summary overlay. */
  overlay?: { from: string; to: string; summary: string };
  /** Content of the auto-wired `memory` block; the frozen prompt is rendered from it. */
  memory?: string;
  usage?: { input: number; output: number; cost: number; cacheRead: number; cacheWrite: number };
}

const text = (value: string): SessionMessagePart => ({ type: "text", text: value });
const user = (id: string, value: string, parent?: string | null): DemoStep => ({
  message: { id, role: "user", parts: [text(value)] },
  ...(parent === undefined ? {} : { parent }),
});
const assistant = (id: string, parts: SessionMessagePart[], parent?: string | null): DemoStep => ({
  message: { id, role: "assistant", parts },
  ...(parent === undefined ? {} : { parent }),
});

/** The system prompt's read-only block, shared by every demo session. */
export const DEMO_SOUL = "You are a careful assistant. Prefer reversible steps and say what could go wrong.";

/**
 * The sample store: a planning conversation with a regenerated answer, an edited question, a tool call and a
 * compaction overlay; a trip plan with reasoning and a tool; a follow-up session linked to the first; and one
 * session written through a plain Session (unregistered). Ids are fixed, so running the demo twice is a no-op.
 */
export const DEMO_SESSIONS: DemoSession[] = [
  {
    id: "demo-deploy",
    name: "Deploy planning",
    model: "claude-sonnet-4-5",
    steps: [
      user("u1", "We need to ship the payments deployment before Friday. What could go wrong?", null),
      assistant("a1", [
        text(
          "The database migration is the riskiest step: it rewrites the invoices table. Run it on staging first.",
        ),
      ]),
      user("u2", "Staging took 40 minutes. Is that a problem?"),
      assistant("a2", [
        text(
          "Yes: 40 minutes of locked invoices in production. Split it: add the column now, backfill in batches, " +
            "switch reads on Thursday.",
        ),
      ]),
      user("u3", "OK. Which day should we deploy?"),
      assistant("a3", [text("Friday afternoon works if the backfill finishes by noon.")]),
      // Regenerated: a second answer to u3 becomes a sibling branch.
      assistant(
        "a3b",
        [
          text(
            "Deploy Thursday morning: a Friday deploy leaves no one around to roll back over the weekend.",
          ),
        ],
        "u3",
      ),
      // Edited: two versions of the follow-up question; the later one is the active branch.
      user("u4e", "Thursday it is. Should we warn the support team?", "a3b"),
      assistant("a4e", [text("Yes: post the rollback plan in #support on Wednesday.")]),
      user("u4", "Thursday it is. Remind me to book the deploy window.", "a3b"),
      assistant("a4", [
        {
          type: "tool-create_reminder",
          toolCallId: "call_1",
          state: "output-available",
          input: { title: "Book the deploy window", due: "Wednesday 17:00" },
          output: { ok: true, id: "rem_42" },
        },
        text("Done: a reminder to book the deploy window on Wednesday at 17:00."),
      ]),
    ],
    overlay: {
      from: "u1",
      to: "a2",
      summary:
        "The payments deployment must ship before Friday. The invoices migration took 40 minutes on staging, " +
        "so it is split: add the column now, backfill in batches, switch reads on Thursday.",
    },
    memory:
      "- Deploys happen on Thursdays, never on Fridays.\n- The payments team owns the invoices migration.",
    usage: { input: 4210, output: 612, cost: 0.0218, cacheRead: 3100, cacheWrite: 800 },
  },
  {
    id: "demo-trip",
    name: "Lisbon trip",
    model: "gpt-5-mini",
    steps: [
      user("t1", "Plan three days in Lisbon in May for me.", null),
      assistant("t2", [
        { type: "reasoning", text: "Three days: old town, Belém, a day trip to Sintra." },
        text("Day 1 Alfama and the castle, day 2 Belém, day 3 Sintra by train."),
      ]),
      user("t3", "What's the weather like then?"),
      assistant("t4", [
        {
          type: "tool-get_weather",
          toolCallId: "call_w1",
          state: "output-available",
          input: { city: "Lisbon", month: "May" },
          output: { highC: 22, lowC: 14, rainyDays: 5 },
        },
        text("Expect 14–22 °C with a few rainy days: pack a light jacket."),
      ]),
      // Markup in a message is data: every view shows it as text.
      user("t5", "Save this snippet for my notes: <script>alert('hi')</script> <b>bold?</b>"),
      assistant("t6", [text("Saved as plain text: <script> tags are never run.")]),
    ],
    memory: "- Prefers window seats.\n- Vegetarian.",
    usage: { input: 1830, output: 402, cost: 0.0031, cacheRead: 0, cacheWrite: 0 },
  },
  {
    id: "demo-retro",
    name: "Deploy retrospective",
    model: "claude-sonnet-4-5",
    parentSessionId: "demo-deploy",
    steps: [
      user("r1", "The Thursday deploy went fine. What should we keep for next time?", null),
      assistant("r2", [text("Keep the split migration and the Wednesday heads-up to support.")]),
    ],
    usage: { input: 640, output: 95, cost: 0.0012, cacheRead: 0, cacheWrite: 0 },
  },
];

/** A session written through a plain Session, not registered: `ls` shows it as unregistered. */
export const DEMO_SCRATCH: { id: string; steps: DemoStep[] } = {
  id: "demo-scratch",
  steps: [
    user("s1", "Scratch note: deployment checklist draft.", null),
    assistant("s2", [text("1. Backfill done. 2. Reads switched. 3. Rollback tested.")]),
  ],
};
