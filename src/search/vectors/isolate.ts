/**
 * Embedding a batch so that one text the embedder refuses (over its token limit, say) cannot hold back the others:
 * a failed call is split in halves until the texts it refuses stand alone.
 */
import { SessionError } from "../../errors.js";
import { isAbort } from "../../runtime/deadline.js";

/** What {@link embedIsolated} made of a batch. */
export interface Isolated {
  /** The vector of each text, where it was embedded. */
  vectors: (Float32Array | undefined)[];
  /** The texts refused by themselves while others were embedded, with the error (by index). */
  refused: Map<number, unknown>;
  /** Set when the embedder looks down (nothing embedded, a deadline, a retryable error): the rest stay pending. */
  stopped?: unknown;
}

/** The longest refusal reason kept (a store keeps one per refused message). */
const MAX_REASON_CHARS = 1_000;

/** The text sent once when every text of a batch failed alone: whether the embedder answers at all. */
export const PROBE_TEXT = "probe";

/**
 * Embeds `texts` through `call`, bisecting a failed call of several texts. A text counts as refused only when it
 * fails alone while the embedder answers others: some call of the batch succeeded, or else a call of
 * {@link PROBE_TEXT} alone. When that fails too the embedder, not the texts, is at fault, and nothing is recorded.
 * An error that says so itself (a deadline, a cancellation, an AI SDK error marked retryable, the store's own
 * checks) stops the work at once, keeping what was embedded before it.
 */
export async function embedIsolated(
  texts: readonly string[],
  call: (texts: string[]) => Promise<Float32Array[]>,
): Promise<Isolated> {
  const vectors: (Float32Array | undefined)[] = new Array(texts.length);
  if (texts.length === 0) return { vectors, refused: new Map() };
  const failedAlone = new Map<number, unknown>();
  let succeeded = false;
  let first: unknown;
  const embed = async (from: number, to: number): Promise<void> => {
    try {
      const answer = await call(texts.slice(from, to));
      for (let i = from; i < to; i++) vectors[i] = answer[i - from];
      succeeded = true;
    } catch (error) {
      first ??= error;
      if (notTheText(error)) throw error;
      if (to - from === 1) {
        failedAlone.set(from, error);
        return;
      }
      const middle = from + Math.ceil((to - from) / 2);
      await embed(from, middle);
      await embed(middle, to);
    }
  };
  try {
    await embed(0, texts.length);
  } catch (error) {
    return { vectors, refused: succeeded ? failedAlone : new Map(), stopped: error };
  }
  if (!succeeded) {
    try {
      await call([PROBE_TEXT]);
    } catch {
      // The embedder fails whatever it is sent: the batch's first error says why (the probe's would only repeat it).
      return { vectors, refused: new Map(), stopped: first };
    }
  }
  return { vectors, refused: failedAlone };
}

// An error that is the embedder's state or the store's configuration rather than one text's content.
function notTheText(error: unknown): boolean {
  if (isAbort(error) || error instanceof SessionError) return true;
  const retryable = (error: unknown) => (error as { isRetryable?: unknown } | null)?.isRetryable === true;
  // The AI SDK's RetryError (retries spent) keeps the last attempt's error.
  return retryable(error) || retryable((error as { lastError?: unknown } | null)?.lastError);
}

/** The reason recorded for a refused text: the error's message, cut (and marked) past 1,000 characters. */
export function refusalReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length <= MAX_REASON_CHARS ? text : `${text.slice(0, MAX_REASON_CHARS - 1)}…`;
}
