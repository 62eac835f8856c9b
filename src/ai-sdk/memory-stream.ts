import type { Content, StreamPart } from "./memory-types.js";

type Streamed = { type: "text" | "reasoning"; text: string; providerMetadata?: unknown };

/**
 * The stream passed through unchanged, its answer gathered as the content a `doGenerate` would return. When it
 * ends with its `finish` part and no `error` part, `store(content)` runs before the `finish` part is passed on,
 * so the SDK's step (and `streamText`'s result) completes only once the answer is stored, and a store that fails
 * errors the stream instead of being lost. A stream with an `error` part, one that breaks off, or one the reader
 * cancels (an abort) stores nothing.
 */
export function storingStream(
  stream: ReadableStream<StreamPart>,
  store: (content: Content[]) => Promise<void>,
): ReadableStream<StreamPart> {
  const content: Array<Content | Streamed> = [];
  const open = new Map<string, Streamed>();
  let finish: StreamPart | null = null;
  let failed = false;
  const streamed = (kind: Streamed["type"], id: string): Streamed => {
    const key = `${kind}:${id}`;
    let entry = open.get(key);
    if (entry === undefined) {
      entry = { type: kind, text: "" };
      open.set(key, entry);
      content.push(entry);
    }
    return entry;
  };
  return stream.pipeThrough(
    new TransformStream<StreamPart, StreamPart>({
      transform(part, controller) {
        switch (part.type) {
          case "text-start":
          case "reasoning-start":
            streamed(part.type === "text-start" ? "text" : "reasoning", part.id);
            break;
          case "text-delta":
          case "reasoning-delta":
            streamed(part.type === "text-delta" ? "text" : "reasoning", part.id).text += part.delta;
            break;
          case "text-end":
          case "reasoning-end": {
            const entry = streamed(part.type === "text-end" ? "text" : "reasoning", part.id);
            if (part.providerMetadata !== undefined) entry.providerMetadata = part.providerMetadata;
            // Ids may be reused by a later block of the same stream.
            open.delete(`${entry.type}:${part.id}`);
            break;
          }
          case "tool-call":
          case "tool-result":
          case "file":
          case "reasoning-file":
            content.push(part as Content);
            break;
          case "error":
            failed = true;
            break;
          case "finish":
            // Held back until the answer is stored (see flush).
            finish = part;
            return;
        }
        controller.enqueue(part);
      },
      async flush(controller) {
        if (finish === null) return;
        if (!failed) await store(content as Content[]);
        controller.enqueue(finish);
      },
    }),
  );
}
