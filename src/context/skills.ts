import type { SessionMessage, SessionMessagePart } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import { isToolNamed } from "../message/tool-parts.js";

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

/** A loaded skill. */
interface Skill {
  label: string;
  key: string;
}

// Labels and keys may both hold ":", so `label:key` names two skills alike ("a:b" + "c", "a" + "b:c"); JSON does not.
const pairKey = (label: string, key: string) => JSON.stringify([label, key]);

/** True when `skill` (or a skill's queue) belongs to `label` (every one when it is undefined). */
const ofLabel = (skill: { label: string }, label: string | undefined) =>
  label === undefined || skill.label === label;

/** `load_context`'s answer when the skill has no such document (the reference's string). */
export const notFoundReply = (key: string) => `Not found: ${key}`;

/** `unload_context`'s answer when it unloaded the skill (the reference's string). */
export const unloadedReply = (label: string, key: string) =>
  `Unloaded "${key}" from ${label}. Context reclaimed.`;

const noop = () => {};

/** The queued loads and unloads of one skill: its block's label, and the tail of its chain. */
interface SkillQueue {
  label: string;
  tail: Promise<void>;
}

/** Which skills are loaded, rebuilt from the history after a restart. */
export class SkillTracker {
  private readonly loaded = new Map<string, Skill>();
  /** Each skill's loads and unloads; an entry leaves once the last queued one settles. */
  private readonly queues = new Map<string, SkillQueue>();
  /** The last reset of every block ({@link exclusive}): every load and unload queued after it waits for it. */
  private barrier: Promise<void> = Promise.resolve();
  /** The last reset of each block: the loads and unloads of that block queued after it wait for it. */
  private readonly barriers = new Map<string, Promise<void>>();

  /**
   * Runs `task` after every earlier load and unload of `label:key` on this tracker has settled. A step's tool calls
   * run in parallel, and a restore replays them in call order: a load landing while an unload's history write is in
   * flight would otherwise be dropped by that unload. Other keys run in parallel; a failure goes to its caller only.
   */
  serialise<T>(label: string, key: string, task: () => Promise<T>): Promise<T> {
    const id = pairKey(label, key);
    const waits = [this.queues.get(id)?.tail, this.barrier, this.barriers.get(label)];
    const run = Promise.all(waits).then(task);
    const settle = () => {
      if (this.queues.get(id)?.tail === tail) this.queues.delete(id);
    };
    const tail: Promise<void> = run.then(settle, settle);
    this.queues.set(id, { label, tail });
    return run;
  }

  /**
   * Runs `task` once the loads and unloads of block `label` (of every block when undefined) queued so far have
   * settled, and holds those queued later until it has: a reset must not interleave with them (a restore that read
   * the history before an unload's write and applied it after the unload would load the skill again). It never
   * waits for another block's calls: one block's `load()` adding another block would otherwise wait for itself.
   */
  private exclusive<T>(label: string | undefined, task: () => T | Promise<T>): Promise<T> {
    const waits: (Promise<void> | undefined)[] = [this.barrier];
    for (const queue of this.queues.values()) if (ofLabel(queue, label)) waits.push(queue.tail);
    if (label === undefined) waits.push(...this.barriers.values());
    else waits.push(this.barriers.get(label));
    const run = Promise.all(waits).then(task);
    const settled = run.then(noop, noop);
    if (label === undefined) {
      this.barrier = settled;
    } else {
      this.barriers.set(label, settled);
      void settled.then(() => {
        if (this.barriers.get(label) === settled) this.barriers.delete(label);
      });
    }
    return run;
  }

  /** How many keys have a load or unload queued or running. */
  get busy(): number {
    return this.queues.size;
  }

  add(label: string, key: string): void {
    this.loaded.set(pairKey(label, key), { label, key });
  }

  /** Forgets a loaded skill; true when it was loaded. */
  delete(label: string, key: string): boolean {
    return this.loaded.delete(pairKey(label, key));
  }

  has(label: string, key: string): boolean {
    return this.loaded.has(pairKey(label, key));
  }

  /** The loaded skills as `label:key` (the reference's format). */
  keys(): Set<string> {
    return new Set([...this.loaded.values()].map((skill) => `${skill.label}:${skill.key}`));
  }

  /**
   * Forgets every skill of a block (when the block is removed): now, and again once the loads and unloads queued
   * so far have settled, since a load already running when the block goes adds its key when it ends.
   */
  dropLabel(label: string): void {
    this.forget(label);
    void this.exclusive(label, () => this.forget(label));
  }

  private forget(label: string | undefined): void {
    for (const [id, skill] of [...this.loaded]) if (ofLabel(skill, label)) this.loaded.delete(id);
  }

  /**
   * Forgets every skill (the history was cleared). Not queued: a load or unload still running belongs to a step
   * whose messages are stored after the clear, and the tracker takes its result as that history will.
   */
  clear(): void {
    this.loaded.clear();
  }

  /** Applies one message's load/unload tool results, in order, to `loaded`. */
  private static apply(message: SessionMessage, loaded: Map<string, Skill>): void {
    for (const part of message.parts) {
      if (part?.state !== "output-available") continue;
      const input = skillInput(part);
      if (!input) continue;
      const entry = pairKey(input.label, input.key);
      // Only what the tracker did counts, so a restart agrees with it: a load that found nothing loaded nothing,
      // and an unload that answered anything but its success string (an error, "not currently loaded", a failed
      // history write) left the document in place. The reference counts both.
      if (isToolNamed(part, "load_context")) {
        const unloaded = typeof part.output === "string" && part.output.startsWith(UNLOADED_PREFIX);
        if (unloaded) loaded.delete(entry);
        else if (part.output !== notFoundReply(input.key)) loaded.set(entry, input);
      } else if (isToolNamed(part, "unload_context")) {
        if (part.output === unloadedReply(input.label, input.key)) loaded.delete(entry);
      }
    }
  }

  /**
   * Rebuilds the loaded skills of `label` (of every block when omitted) from the active path's skill tool results
   * (see {@link assistantRows}). Queued as a reset ({@link exclusive}); the set changes at once when the read ends.
   */
  restore(provider: SessionProvider, label?: string): Promise<void> {
    return this.exclusive(label, async () => {
      const found = new Map<string, Skill>();
      for await (const message of assistantRows(provider, SKILL_TOOLS, false))
        SkillTracker.apply(message, found);
      this.forget(label);
      for (const [id, skill] of found) if (ofLabel(skill, label)) this.loaded.set(id, skill);
    });
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
