/**
 * A late answer: a send's answer that another request of the chat overtook (it stored a message after the question
 * while the answer streamed), so the store keeps the newer message and not this answer (chat-conflict.ts). Its own
 * response still ends cleanly: `ChatTurn.response` ends the stream with a `data-answer-not-kept` part the page can
 * show, and a route that spreads `streamOptions` gets a normal end and one `AgentSessionChatWarning`.
 */
import { SessionError } from "../errors.js";
import { emitWarning } from "../runtime/warn.js";

/** The type of the UI message stream part that says the streamed answer was not stored (`data-answer-not-kept`). */
export const NOT_KEPT_PART = "data-answer-not-kept";

/** The data of a `data-answer-not-kept` part: why the answer was not stored, and under which message it would go. */
export interface AnswerNotKept {
  code: "CONFLICT";
  message: string;
  /** The question the answer was for; the page reloads (`loadChat`) to see what the store kept after it. */
  parentId: string | null;
}

/** What `appendAnswer` threw as the part's data when it is its refusal (`CONFLICT`), else undefined (thrown on). */
export function notKept(error: unknown, parentId: string | null): AnswerNotKept | undefined {
  if (!(error instanceof SessionError && error.code === "CONFLICT")) return undefined;
  return { code: "CONFLICT", message: error.message, parentId };
}

/** Reports a late answer no page is told about (a route that spreads `streamOptions`). */
export function warnNotKept(answer: AnswerNotKept): void {
  emitWarning(`${answer.message}: reload the conversation (loadChat)`, "AgentSessionChatWarning");
}

const DONE = "data: [DONE]\n\n";

/**
 * The SSE body of a UI message stream with `data-answer-not-kept` before its `[DONE]` when `outcome()` (read once
 * the stream has ended, so after `onFinish`) says the answer was not stored.
 */
export function withNotKept(
  body: ReadableStream<Uint8Array>,
  outcome: () => AnswerNotKept | undefined,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let done: Uint8Array | undefined;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (done) controller.enqueue(done);
        done = undefined;
        // The AI SDK writes each SSE event as one chunk; its end marker is held back until the outcome is known.
        if (chunk.byteLength === DONE.length && decoder.decode(chunk) === DONE) done = chunk;
        else controller.enqueue(chunk);
      },
      flush(controller) {
        const answer = outcome();
        if (answer)
          controller.enqueue(
            encoder.encode(`data: ${JSON.stringify({ type: NOT_KEPT_PART, data: answer })}\n\n`),
          );
        if (done) controller.enqueue(done);
      },
    }),
  );
}
