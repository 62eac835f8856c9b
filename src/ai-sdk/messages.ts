import type { UIMessage } from "ai";
import type { SessionMessage } from "../types.js";
import type { ChatStorage } from "./storage.js";

/**
 * The path to `leafId` (default: the latest leaf) typed as the app's `UIMessage`s, for `useChat`'s initial
 * messages or `convertToModelMessages`. Stored messages are the `UIMessage`s that were written, so the one
 * conversion lives here rather than in every app.
 */
export async function loadChat<M extends UIMessage = UIMessage>(
  storage: Pick<ChatStorage, "getHistory">,
  leafId?: string | null,
): Promise<M[]> {
  return asUIMessages<M>(await storage.getHistory(leafId));
}

/** Stored messages typed as the app's `UIMessage`s (a compaction overlay reads as an assistant text message). */
export function asUIMessages<M extends UIMessage = UIMessage>(messages: SessionMessage[]): M[] {
  return messages as unknown as M[];
}
