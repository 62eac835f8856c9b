import type { UIMessage } from "ai";
import type { SessionMessage } from "../contract/message.js";
import type { ChatStorage } from "./storage.js";

/**
 * The path to `leafId` (default: the latest leaf) as `UIMessage`s, for `useChat`'s initial messages or
 * `convertToModelMessages`. On a `Session<M>` whose `M` is the app's `UIMessage` type it is `getHistory` as is;
 * on an untyped session (`Session`, a `SessionProvider`) it is typed as `M` (default `UIMessage`), because stored
 * messages are the `UIMessage`s that were written.
 */
export async function loadChat<M extends UIMessage>(
  storage: Pick<ChatStorage<M>, "getHistory">,
  leafId?: string | null,
): Promise<M[]>;
export async function loadChat<M extends UIMessage = UIMessage>(
  storage: Pick<ChatStorage, "getHistory">,
  leafId?: string | null,
): Promise<M[]>;
export async function loadChat(
  storage: Pick<ChatStorage, "getHistory">,
  leafId?: string | null,
): Promise<UIMessage[]> {
  return asUIMessages(await storage.getHistory(leafId));
}

/**
 * Messages of an untyped session typed as the app's `UIMessage`s (a compaction overlay reads as an assistant text
 * message). Not needed on a `Session<M>` created with the app's message type: its reads are already `M`.
 */
export function asUIMessages<M extends UIMessage = UIMessage>(messages: SessionMessage[]): M[] {
  return messages as unknown as M[];
}
