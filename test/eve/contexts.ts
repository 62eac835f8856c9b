// eve's operation contexts as eve builds them for a memory provider (eve/memory's MemoryOperationContext and its
// phases; the operation id in eve's own format), for driving the provider's handlers without an eve server.
import type { ModelMessage } from "ai";
import type {
  MemoryCompactionCompletedContext,
  MemoryCompactionRequestedContext,
  MemoryToolsContext,
  MemoryTurnCompletedContext,
  MemoryTurnStartedContext,
} from "eve/memory";

/** Node's major version: eve 0.80 needs 24 or later. */
export const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
/** Why eve's cases skip on this Node, or false. */
export const EVE_SKIP: string | false =
  NODE_MAJOR >= 24
    ? false
    : `eve needs Node >= 24 (this is ${process.versions.node}); CI runs test/eve on Node 24`;
if (EVE_SKIP) console.log(`Skipping: ${EVE_SKIP}`);

/** Who is talking, in which eve session and memory scope. */
export interface Who {
  principal: string | null;
  principalType?: string;
  eveSession: string;
  scopeKey?: string;
  slot?: string;
}

const base = (who: Who, phase: string, turnId: string | null, sequence: number) => ({
  abortSignal: new AbortController().signal,
  session: {
    id: who.eveSession,
    auth: {
      current:
        who.principal === null
          ? null
          : {
              attributes: {},
              authenticator: "test",
              principalId: who.principal,
              principalType: who.principalType ?? "user",
            },
      initiator: null,
    },
    turn: { id: turnId ?? "none", sequence },
  },
  memory: {
    scope: {
      key: who.scopeKey ?? `memory-scope-v1:${who.principal}`,
      namespace: "test",
      value: who.principal ?? "",
    },
    slot: who.slot ?? "memory",
  },
  operationId: [
    "eve-memory-operation-v1",
    who.eveSession,
    String(sequence),
    turnId ?? "standalone",
    phase,
    who.slot ?? "memory",
  ].join(":"),
});

const turnOf = (id: string, input: ModelMessage[], sequence: number) => ({ id, input, sequence });

/** The context of `phase` in turn `turnId` (`extra`: the phase's own fields). */
const phaseOf = (
  who: Who,
  phase: string,
  turnId: string,
  sequence: number,
  input: ModelMessage[],
  messages: ModelMessage[],
  extra: object = {},
) => ({ ...base(who, phase, turnId, sequence), messages, turn: turnOf(turnId, input, sequence), ...extra });

type Args = [who: Who, turnId: string, sequence: number, input: ModelMessage[], messages: ModelMessage[]];

/** A turn start's context. */
export const turnStarted = (...a: Args) =>
  phaseOf(a[0], "turn.started", ...tail(a)) as unknown as MemoryTurnStartedContext;

/** A turn completion's context. */
export const turnCompleted = (...a: Args) =>
  phaseOf(a[0], "turn.completed", ...tail(a)) as unknown as MemoryTurnCompletedContext;

/** A compaction request's context (within a turn). */
export const compactionRequested = (...a: Args) =>
  phaseOf(a[0], "compaction.requested", ...tail(a), {
    compaction: { modelId: "mock", usageInputTokens: 1_000 },
  }) as unknown as MemoryCompactionRequestedContext;

/** A compaction completion's context (within a turn). */
export const compactionCompleted = (...a: Args) =>
  phaseOf(a[0], "compaction.completed", ...tail(a), {
    compaction: { modelId: "mock" },
  }) as unknown as MemoryCompactionCompletedContext;

const tail = ([, turnId, sequence, input, messages]: Args) => [turnId, sequence, input, messages] as const;

/** The tools context of a turn. */
export function toolsContext(who: Who, turnId: string, sequence: number) {
  const { operationId: _, abortSignal: __, ...rest } = base(who, "tools", turnId, sequence);
  return { ...rest, model: null, turn: turnOf(turnId, [], sequence) } as unknown as MemoryToolsContext;
}

/** A user message and an assistant message. */
export const user = (text: string): ModelMessage => ({ role: "user", content: text });
export const assistant = (text: string): ModelMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
});
