// Loaded only by the demo command: the manager and Session pull in the whole context layer (zod schemas), which
// the other commands never need.

import { hasSessionRegistry } from "../../contract/registry.js";
import type { SessionStore } from "../../contract/store.js";
import { SessionManager } from "../../manager/manager.js";
import { estimateMessageTokens } from "../../message/tokens.js";
import { Session } from "../../session/session.js";
import { CliError } from "../errors.js";
import { DEMO_SCRATCH, DEMO_SESSIONS, DEMO_SOUL, type DemoSession, type DemoStep } from "./data.js";

async function appendSteps(
  append: (message: DemoStep["message"], parent: string | null | undefined) => Promise<unknown>,
  steps: readonly DemoStep[],
): Promise<void> {
  for (const step of steps) await append(step.message, step.parent);
}

// Through the public API, as an application would write it: manager, Session, blocks, overlay, usage.
async function seed(manager: SessionManager, demo: DemoSession): Promise<void> {
  await manager.create(demo.name, {
    id: demo.id,
    model: demo.model,
    source: "cli-demo",
    ...(demo.parentSessionId ? { parentSessionId: demo.parentSessionId } : {}),
  });
  await appendSteps((message, parent) => manager.append(demo.id, message, parent), demo.steps);
  if (demo.overlay) {
    const { from, to, summary } = demo.overlay;
    const history = await manager.getHistory(demo.id, to);
    const covered = history.slice(history.findIndex((m) => m.id === from));
    const tokensBefore = estimateMessageTokens(covered);
    const summaryTokens = estimateMessageTokens([
      { id: "s", role: "assistant", parts: [{ type: "text", text: summary }] },
    ]);
    await manager.addCompaction(demo.id, summary, from, to, {
      coveredMessages: covered.length,
      tokensBefore,
      tokensAfter: summaryTokens,
      summaryTokens,
      summaryChars: summary.length,
    });
  }
  const session = manager.getSession(demo.id);
  if (demo.memory) await session.replaceContextBlock("memory", demo.memory);
  await session.freezeSystemPrompt();
  if (demo.usage) {
    const { input, output, cost, cacheRead, cacheWrite } = demo.usage;
    await manager.addUsage(demo.id, input, output, cost, {
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
    });
  }
}

/** Writes the sample sessions that are missing; returns which ones it created. */
export async function seedDemo(store: SessionStore): Promise<{ id: string; created: boolean }[]> {
  if (!hasSessionRegistry(store)) {
    throw new CliError(
      `demo needs a session registry, which the ${store.backend} store does not have yet`,
      "UNSUPPORTED",
    );
  }
  const manager = SessionManager.create(store)
    .withContext("soul", { provider: { get: async () => DEMO_SOUL } })
    .withContext("memory", { description: "Facts learned about the user", maxTokens: 500 })
    .withCachedPrompt();
  const result: { id: string; created: boolean }[] = [];
  for (const demo of DEMO_SESSIONS) {
    // A session that exists is left alone: running the demo again writes nothing (overlays and usage would add up).
    const created = (await manager.get(demo.id)) === null;
    if (created) await seed(manager, demo);
    result.push({ id: demo.id, created });
  }
  const scratch = Session.create(store).forSession(DEMO_SCRATCH.id);
  const created = (await scratch.getLatestLeaf()) === null;
  if (created)
    await appendSteps((message, parent) => scratch.appendMessage(message, parent), DEMO_SCRATCH.steps);
  result.push({ id: DEMO_SCRATCH.id, created });
  return result;
}
