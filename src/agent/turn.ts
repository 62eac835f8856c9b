import type {
  CallSettings,
  Experimental_DownloadFunction as DownloadFunction,
  FinishReason,
  ModelMessage,
  StepResult,
  ToolSet,
} from "ai";
import { stepMessages } from "../ai-majors.js";
import { errorMessage, SessionError } from "../errors.js";
import { ABORTED, untilAborted } from "../runtime/abort.js";
import type { AiModule } from "./ai.js";
import { normalize } from "./codec.js";
import type { EventChannel } from "./events.js";
import { newId } from "./ids.js";
import { type ModelObject, modelLabel } from "./model.js";
import type { SessionRecord } from "./record.js";
import { pendingToolCalls } from "./repair.js";
import { storableToolResults } from "./tool-output.js";
import type { AgentEvent, AgentMessage, ModelPricing, StopReason, UsageEntry } from "./types.js";
import { usageEntry } from "./usage.js";

/** Model call settings passed through to `streamText` (temperature, maxOutputTokens, headers, …). */
export type ModelSettings = Omit<CallSettings, "abortSignal"> & {
  providerOptions?: NonNullable<Parameters<AiModule["streamText"]>[0]["providerOptions"]>;
};

/** Everything one turn needs. */
export interface TurnInput {
  ai: AiModule;
  model: ModelObject;
  record: SessionRecord;
  events: EventChannel<AgentEvent>;
  turn: number;
  maxTurns: number;
  system: string | undefined;
  messages: ModelMessage[];
  tools: ToolSet | undefined;
  pricing?: ModelPricing | undefined;
  controller: AbortController;
  settings: ModelSettings;
  /** Fetches the media of the prompt the model does not fetch itself (the AI SDK's `experimental_download`). */
  download?: DownloadFunction | undefined;
}

/** How the model loop ended (before the turn is closed in storage). */
export interface TurnResult {
  reason: StopReason;
  finishReason?: FinishReason;
  /** Why the turn did not complete, for the interrupted note. */
  failure?: string;
}

interface StoredStep {
  messages: AgentMessage[];
  entry: UsageEntry;
  finishReason: FinishReason;
}

class Deferred<T> {
  resolve!: (value: T) => void;
  readonly promise = new Promise<T>((resolve) => {
    this.resolve = resolve;
  });
}

/**
 * Runs the model loop of one turn. Each completed step is stored from `onStepFinish`, which `streamText` awaits
 * before it starts the next step, so a crash loses at most the step in flight. Events are emitted from the stream
 * reader only, in stream order; a step's `message` and `step` events wait for its write to finish.
 */
export async function streamTurn(input: TurnInput): Promise<TurnResult> {
  const { ai, record, events, turn, controller } = input;
  const signal = controller.signal;
  const steps = new Map<number, Deferred<StoredStep | undefined>>();
  const stepFor = (n: number) => {
    const deferred = steps.get(n) ?? new Deferred<StoredStep | undefined>();
    steps.set(n, deferred);
    return deferred;
  };
  let storeFailure: unknown;
  let earlier = 0;

  const onStepFinish = async (step: StepResult<ToolSet>) => {
    const deferred = stepFor(step.stepNumber);
    const fresh = stepMessages(ai, step.response.messages, earlier);
    earlier += fresh.length;
    // A step that failed midway is not a completed step: its partial output is not stored.
    if (signal.aborted || storeFailure !== undefined || step.finishReason === "error")
      return deferred.resolve(undefined);
    try {
      const now = Date.now();
      const messages: AgentMessage[] = fresh.map((message) => ({
        ...storableToolResults(message, ai.modelMessageSchema),
        id: newId("msg"),
        createdAt: now,
        metadata: {
          turn,
          step: step.stepNumber,
          ...(message.role === "assistant" ? { finishReason: step.finishReason } : {}),
        },
      }));
      const entry = usageEntry(step.usage, {
        kind: "step",
        turn,
        step: step.stepNumber,
        model: modelLabel(step.model),
        pricing: input.pricing,
      });
      await record.append(messages, { usage: [entry] });
      const stored = messages.length > 0 ? record.messages.slice(-messages.length) : [];
      deferred.resolve({ messages: normalize(stored), entry, finishReason: step.finishReason });
    } catch (error) {
      // streamText swallows callback errors, so the failure is kept here and the loop is stopped.
      storeFailure = error;
      controller.abort(error);
      deferred.resolve(undefined);
    }
  };

  const errors: unknown[] = [];
  let last: StoredStep | undefined;
  let finished = 0;
  try {
    const result = ai.streamText({
      ...input.settings,
      model: input.model,
      ...(input.system ? { system: input.system } : {}),
      messages: input.messages,
      ...(input.tools ? { tools: input.tools } : {}),
      stopWhen: ai.stepCountIs(input.maxTurns),
      abortSignal: signal,
      onStepFinish,
      ...(input.download ? { experimental_download: input.download } : {}),
      // Errors reach the caller as events from the stream; the default handler would also print them.
      onError: () => {},
    });
    const parts = result.fullStream[Symbol.asyncIterator]();
    while (true) {
      const next = await untilAborted(parts.next(), signal);
      if (next === ABORTED) {
        // Providers stop on the abort signal; this also releases a stream that would ignore it.
        parts.return?.().catch(() => undefined);
        break;
      }
      if (next.done) break;
      const part = next.value;
      switch (part.type) {
        case "text-delta":
          events.push({ type: "text", text: part.text });
          break;
        case "reasoning-delta":
          events.push({ type: "reasoning", text: part.text });
          break;
        case "tool-call":
          events.push({
            type: "tool-call",
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
          });
          break;
        case "tool-result":
          if (part.preliminary) break;
          events.push({
            type: "tool-result",
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            output: part.output,
          });
          break;
        case "tool-error":
          events.push({
            type: "tool-error",
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            error: errorMessage(part.error),
          });
          break;
        case "error":
          errors.push(part.error);
          events.push({ type: "error", error: part.error, message: errorMessage(part.error) });
          break;
        case "finish-step": {
          const stored = await untilAborted(stepFor(finished++).promise, signal);
          if (stored === ABORTED || stored === undefined) break;
          last = stored;
          for (const message of stored.messages) events.push({ type: "message", message });
          events.push({
            type: "step",
            step: stored.entry.step,
            finishReason: stored.finishReason,
            usage: stored.entry,
          });
          break;
        }
      }
    }
  } catch (error) {
    if (!signal.aborted) {
      errors.push(error);
      events.push({ type: "error", error, message: errorMessage(error) });
    }
  }
  return outcome({ record, events, input, errors, storeFailure, last, aborted: signal.aborted });
}

function outcome(args: {
  record: SessionRecord;
  events: EventChannel<AgentEvent>;
  input: TurnInput;
  errors: unknown[];
  storeFailure: unknown;
  last: StoredStep | undefined;
  aborted: boolean;
}): TurnResult {
  const { errors, last } = args;
  if (args.storeFailure !== undefined) {
    const error = new SessionError("STORAGE", `Could not store a step: ${errorMessage(args.storeFailure)}`, {
      cause: args.storeFailure,
    });
    args.events.push({ type: "error", error, message: error.message });
    return { reason: "error", failure: "its progress could not be stored" };
  }
  if (errors.length > 0)
    return { reason: "error", failure: `an error occurred (${errorMessage(errors[0])})` };
  if (args.aborted) return { reason: "interrupted", failure: "the caller interrupted it" };
  if (!last) {
    const error = new Error("The model stream ended without completing a step");
    args.events.push({ type: "error", error, message: error.message });
    return { reason: "error", failure: "the model returned nothing" };
  }
  const finishReason = last.finishReason;
  if (finishReason !== "tool-calls") return { reason: "completed", finishReason };
  if (pendingToolCalls(args.record.messages).length > 0)
    return { reason: "awaiting-tool-results", finishReason };
  return { reason: "max-turns", finishReason };
}
