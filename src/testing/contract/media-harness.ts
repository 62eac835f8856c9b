// The inline media the attachment specs write and the checks they make on the attachment store: deterministic
// payload bytes, image messages and every media shape the offloading rule knows, and the stored-payload count.
import assert from "node:assert/strict";
import { type AttachmentStore, hasAttachmentStore } from "../../contract/attachments.js";
import type { SessionMessage } from "../../contract/message.js";
import type { SessionStore } from "../../contract/store.js";

/** Deterministic pseudo-random bytes (incompressible, distinct per seed). */
export function bytesOf(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** A PNG data URL of `size` pseudo-random bytes. */
export function png(size: number, seed: number): string {
  return `data:image/png;base64,${bytesOf(size, seed).toString("base64")}`;
}

/** A message with a text part and an image file part at `url`. */
export function imageMessage(id: string, url: string, role = "user"): SessionMessage {
  return {
    id,
    role,
    parts: [
      { type: "text", text: `look at ${id}` },
      { type: "file", mediaType: "image/png", url },
    ],
  } as SessionMessage;
}

/** The url of the file part of an {@link imageMessage}. */
export function urlOf(message: SessionMessage | null): unknown {
  return (message?.parts[1] as { url?: unknown } | undefined)?.url;
}

/** The store's attachment store (asserting it has one). */
export function attachmentsOf(store: SessionStore): AttachmentStore {
  assert.ok(hasAttachmentStore(store), "the store has an attachment store");
  return store.attachments;
}

/** Asserts how many distinct payloads the store holds (and, given, their total bytes). */
export async function assertStored(store: SessionStore, count: number, bytes?: number): Promise<void> {
  const stats = await attachmentsOf(store).stats();
  assert.equal(stats.count, count, "distinct payloads stored");
  if (bytes !== undefined) assert.equal(stats.bytes, bytes, "payload bytes stored");
}

/** Every shape of inline media the offloading rule knows, each big enough to be offloaded. */
export function mediaShapes(): SessionMessage {
  const b64 = (seed: number) => bytesOf(3000, seed).toString("base64");
  return {
    id: "shapes",
    role: "assistant",
    parts: [
      {
        type: "file",
        mediaType: "application/pdf",
        filename: "a.pdf",
        url: `data:application/pdf;base64,${b64(1)}`,
      },
      {
        type: "tool-screenshot",
        toolCallId: "c1",
        state: "output-available",
        input: { url: "https://example.com" },
        output: {
          type: "content",
          value: [
            { type: "text", text: "done" },
            { type: "media", data: b64(2), mediaType: "image/png" },
            { type: "image-data", data: b64(3), mediaType: "image/jpeg" },
            { type: "file-data", data: b64(4), mediaType: "application/pdf", filename: "x.pdf" },
          ],
        },
      },
      {
        type: "dynamic-tool",
        toolName: "mcp",
        toolCallId: "c2",
        state: "output-available",
        input: {},
        output: {
          content: [
            { type: "image", data: b64(5), mimeType: "image/webp" },
            { type: "audio", data: b64(6), mimeType: "audio/wav" },
          ],
        },
      },
      { type: "image", image: b64(7), mediaType: "image/gif" },
      { type: "file", mimeType: "image/png", data: b64(8) },
    ],
    experimental_attachments: [{ name: "s.png", contentType: "image/png", url: png(3000, 9) }],
  } as unknown as SessionMessage;
}
