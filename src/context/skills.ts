import { isToolNamed } from "../message/tool-parts.js";
import type { SessionMessage, SessionMessagePart, SessionProvider } from "../types.js";

/** Marker written over a load_context output when its skill is unloaded (the reference's string). */
export const UNLOADED_PREFIX = "[skill unloaded:";

/** The tools whose results say which skills are loaded. */
const SKILL_TOOLS = ["load_context", "unload_context"] as const;

/**
 * The assistant rows of the active path that may carry one of `tools`, root first (newest first when asked): raw
 * rows, so calls inside compacted ranges count. A provider with `getToolMessages` reads only the rows calling them;
 * otherwise every assistant row is fetched (with row stats, one at a time, so an unload can stop at its load), or
 * the history is read once.
 */
async function* assistantRows(
  provider: SessionProvider,
  tools: readonly string[],
  newestFirst: boolean,
): AsyncGenerator<SessionMessage> {
  if (provider.getToolMessages) {
    const found = (await provider.getToolMessages(tools)).filter((m) => m.role === "assistant");
    yield* newestFirst ? found.reverse() : found;
    return;
  }
  if (provider.getHistoryRowStats) {
    const ids = (await provider.getHistoryRowStats()).filter((r) => r.role === "assistant").map((r) => r.id);
    if (newestFirst) ids.reverse();
    for (const id of ids) {
      const message = await provider.getMessage(id);
      if (message) yield message;
    }
    return;
  }
  const all = (await provider.getHistory()).filter((m) => m.role === "assistant");
  yield* newestFirst ? all.reverse() : all;
}

function skillInput(part: SessionMessagePart): { label: string; key: string } | undefined {
  const input = part.input as { label?: unknown; key?: unknown } | undefined;
  if (typeof input?.label === "string" && typeof input.key === "string")
    return { label: input.label, key: input.key };
  return undefined;
}

const pairKey = (label: string, key: string) => `${label}:${key}`;

/** `load_context`'s answer when the skill has no such document (the reference's string). */
export const notFoundReply = (key: string) => `Not found: ${key}`;

/** `unload_context`'s answer when it unloaded the skill (the reference's string). */
export const unloadedReply = (label: string, key: string) =>
  `Unloaded "${key}" from ${label}. Context reclaimed.`;

/** Which skills are loaded (`label:key`), rebuilt from the history after a restart. */
export class SkillTracker {
  private readonly loaded = new Set<string>();
  /** The tail of each key's loads and unloads; an entry leaves once the last queued one settles. */
  private readonly queues = new Map<string, Promise<void>>();

  /**
   * Runs `task` after every earlier load and unload of `label:key` on this tracker has settled. A step's tool calls
   * run in parallel, and a restore replays them in call order: a load landing while an unload's history write is in
   * flight would otherwise be dropped by that unload. Other keys run in parallel; a failure goes to its caller only.
   */
  serialise<T>(label: string, key: string, task: () => Promise<T>): Promise<T> {
    const id = pairKey(label, key);
    const run = (this.queues.get(id) ?? Promise.resolve()).then(task);
    const settle = () => {
      if (this.queues.get(id) === tail) this.queues.delete(id);
    };
    const tail: Promise<void> = run.then(settle, settle);
    this.queues.set(id, tail);
    return run;
  }

  /** How many keys have a load or unload queued or running. */
  get busy(): number {
    return this.queues.size;
  }

  add(label: string, key: string): void {
    this.loaded.add(pairKey(label, key));
  }

  /** Forgets a loaded skill; true when it was loaded. */
  delete(label: string, key: string): boolean {
    return this.loaded.delete(pairKey(label, key));
  }

  has(label: string, key: string): boolean {
    return this.loaded.has(pairKey(label, key));
  }

  /** A copy of the loaded set. */
  keys(): Set<string> {
    return new Set(this.loaded);
  }

  /** Forgets every skill of a block (when the block is removed). */
  dropLabel(label: string): void {
    for (const entry of [...this.loaded]) if (entry.startsWith(`${label}:`)) this.loaded.delete(entry);
  }

  clear(): void {
    this.loaded.clear();
  }

  /** Applies one message's load/unload tool results, in order. */
  private apply(message: SessionMessage): void {
    for (const part of message.parts) {
      if (part?.state !== "output-available") continue;
      const input = skillInput(part);
      if (!input) continue;
      // Only what the tracker did counts, so a restart agrees with it: a load that found nothing loaded nothing,
      // and an unload that answered anything but its success string (an error, "not currently loaded", a failed
      // history write) left the document in place. The reference counts both.
      if (isToolNamed(part, "load_context")) {
        const unloaded = typeof part.output === "string" && part.output.startsWith(UNLOADED_PREFIX);
        if (unloaded) this.delete(input.label, input.key);
        else if (part.output !== notFoundReply(input.key)) this.add(input.label, input.key);
      } else if (isToolNamed(part, "unload_context")) {
        if (part.output === unloadedReply(input.label, input.key)) this.delete(input.label, input.key);
      }
    }
  }

  /** Rebuilds the loaded set from the active path's skill tool results (see {@link assistantRows}). */
  async restore(provider: SessionProvider): Promise<void> {
    this.clear();
    for await (const message of assistantRows(provider, SKILL_TOOLS, false)) this.apply(message);
  }

  /**
   * Replaces the output of the newest load of `label:key` on the active path with the unloaded marker, so the
   * next model call no longer carries the document.
   */
  async markUnloaded(provider: SessionProvider, label: string, key: string): Promise<void> {
    for await (const message of assistantRows(provider, ["load_context"], true)) {
      const index = message.parts.findIndex((part) => {
        const input = part && isToolNamed(part, "load_context") ? skillInput(part) : undefined;
        return part?.state === "output-available" && input?.label === label && input.key === key;
      });
      if (index < 0) continue;
      const parts = message.parts.slice();
      parts[index] = { ...parts[index]!, output: `${UNLOADED_PREFIX} ${key}]` };
      await provider.updateMessage({ ...message, parts });
      return;
    }
  }
}
