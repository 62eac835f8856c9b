/**
 * `agentSessionMemory`: eve's memory provider over a SessionManager (docs/EVE.md). Recall runs at turn start and
 * after compaction, capture at turn completion and before compaction, and the tools close over the operation's
 * owner and scope. The `eve` package is not loaded here: its types only, and `eve/tools` imported when eve first
 * asks for the tools, so an app that does not use the door loads nothing of eve.
 */
import type {
  MemoryCompactionCompletedContext,
  MemoryOperationContext,
  MemoryProvider,
  MemoryToolSet,
  MemoryToolsContext,
  MemoryTurnStartedContext,
} from "eve/memory";
import { captureAt } from "./capture.js";
import type { EveMessage } from "./messages.js";
import { type AgentSessionMemoryOptions, memorySettings } from "./options.js";
import { type Recalled, recallAt } from "./recall.js";
import { placeOf } from "./scope.js";
import { doorTools } from "./tools.js";

/** Recall answers kept per operation id, so a replayed recall answers what it answered (eve refuses another). */
const REPLAYS = 256;

/**
 * An eve `MemoryProvider` on an agent-session store: `defineMemory({ provider: agentSessionMemory({ manager }),
 * scope: byPrincipal })`. The principal is the owner; every write is that owner's, so `eraseOwner` and `purge`
 * reach it with the owner's other sessions.
 */
export function agentSessionMemory(options: AgentSessionMemoryOptions): MemoryProvider {
  const settings = memorySettings(options);
  const answered = new Map<string, Recalled>();

  const recall = async (
    context: MemoryTurnStartedContext | MemoryCompactionCompletedContext,
  ): Promise<Recalled> => {
    const known = answered.get(context.operationId);
    if (known !== undefined) return known;
    const place = placeOf(settings, context);
    if (place === null) return null;
    const input = (context.turn?.input ?? []) as readonly EveMessage[];
    const result = await recallAt(settings, place, input, context.messages as readonly EveMessage[]);
    answered.set(context.operationId, result);
    if (answered.size > REPLAYS) answered.delete(answered.keys().next().value as string);
    return result;
  };

  const capture = async (context: MemoryOperationContext): Promise<void> => {
    const place = placeOf(settings, context);
    if (place === null) return;
    await captureAt(place, context.messages as readonly EveMessage[], context.operationId);
  };

  const tools = async (context: MemoryToolsContext): Promise<MemoryToolSet | null> => {
    const place = placeOf(settings, context);
    if (place === null) return null;
    const { defineTool } = await import("eve/tools");
    const set: Record<string, MemoryToolSet[string]> = {};
    for (const [name, tool] of Object.entries(doorTools(settings, place)))
      set[name] = defineTool(tool as never) as unknown as MemoryToolSet[string];
    return set;
  };

  return {
    recall: { "turn.started": recall, "compaction.completed": recall },
    ...(settings.capture ? { capture: { "turn.completed": capture, "compaction.requested": capture } } : {}),
    tools,
  };
}
