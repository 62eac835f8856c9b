// A model whose stream the test writes piece by piece, and the chat route with a resumable stream and its GET.
import { convertToModelMessages, streamText, type UIMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { type ChatRequestBody, persistChatTurn, type ResumableStreams } from "../../src/ai-sdk/index.js";
import { Session, type SessionStore } from "../../src/index.js";

type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model that streams text only when the test says: `say(words)` sends deltas, `finish()` ends the answer. */
export class GatedModel {
  private controller: ReadableStreamDefaultController<StreamPart> | null = null;
  private started: (() => void) | null = null;
  /** Resolves when the model has been called and its stream is open. */
  readonly called = new Promise<void>((resolve) => {
    this.started = resolve;
  });
  readonly model = new MockLanguageModelV3({
    doStream: async () => ({
      stream: new ReadableStream<StreamPart>({
        start: (controller) => {
          this.controller = controller;
          controller.enqueue({ type: "stream-start", warnings: [] });
          controller.enqueue({ type: "text-start", id: "t" });
          this.started?.();
        },
      }),
    }),
  });

  say(...words: string[]): void {
    for (const delta of words) this.controller!.enqueue({ type: "text-delta", id: "t", delta });
  }

  finish(): void {
    this.controller!.enqueue({ type: "text-end", id: "t" });
    this.controller!.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
    this.controller!.close();
  }
}

/** POST: the README's route with `resumable`; GET `/api/chat/:id/stream`: the reconnect. */
export function resumableRoute(store: SessionStore, streams: ResumableStreams, model: GatedModel) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const stream = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    if (request.method === "GET" && stream) return streams.response(decodeURIComponent(stream[1]!));
    const { id, messages, trigger, messageId } = (await request.json()) as ChatRequestBody;
    const turn = await persistChatTurn(
      Session.create(store).forSession(id),
      { messages, trigger, messageId },
      { resumable: streams },
    );
    const result = streamText({ model: model.model, messages: await convertToModelMessages(turn.messages) });
    return result.toUIMessageStreamResponse(turn.streamOptions);
  };
}

/** A user message as `useChat` makes it. */
export function userMessage(id: string, text: string): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** Reads an SSE body to its end and returns its events' data (JSON parsed, `[DONE]` as is). */
export async function events(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice(6))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

/** Resolves once `check()` holds, looking again after each turn of the event loop (a condition, not a duration). */
export async function until(check: () => Promise<boolean>, what: string, tries = 2000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`never: ${what}`);
}
