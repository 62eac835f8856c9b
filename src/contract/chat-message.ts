// A typed message for apps without the AI SDK: the part types a chat stores, as a union that `part.type` narrows.
import type { SessionMessage } from "./message.js";

/**
 * One part of a {@link ChatMessage}: the common shapes of the AI SDK's `UIMessagePart` (v5 and later), as a union,
 * so `p.type === "text" ? p.text : ""` is a `string` under `strict`. The stored shape is the same as for any part.
 */
export type ChatMessagePart =
  | { type: "text"; text: string; state?: "streaming" | "done"; providerMetadata?: unknown }
  | { type: "reasoning"; text: string; state?: "streaming" | "done"; providerMetadata?: unknown }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: string;
      input?: unknown;
      output?: unknown;
      errorText?: string;
      providerExecuted?: boolean;
    }
  | {
      type: "dynamic-tool";
      toolName: string;
      toolCallId: string;
      state: string;
      input?: unknown;
      output?: unknown;
      errorText?: string;
    }
  | { type: "file"; mediaType: string; url: string; filename?: string; providerMetadata?: unknown }
  | { type: "source-url"; sourceId: string; url: string; title?: string; providerMetadata?: unknown }
  | {
      type: "source-document";
      sourceId: string;
      mediaType: string;
      title: string;
      filename?: string;
      providerMetadata?: unknown;
    }
  | { type: "step-start" }
  | { type: `data-${string}`; id?: string; data: unknown };

/**
 * A message whose parts are a union ({@link ChatMessagePart}): `Session.create<ChatMessage>(store)` types a
 * session's reads and writes with it, without the AI SDK (with it, use its `UIMessage`).
 */
export interface ChatMessage extends SessionMessage {
  role: "system" | "user" | "assistant";
  parts: ChatMessagePart[];
}
