import { SessionError } from "../errors.js";
import { isStorableId } from "../message/ids.js";
import { estimateStringTokens } from "../message/tokens.js";
import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";
import { contextOptions, newBlockLabel } from "./options-schema.js";
import { blockReadFailure, promptRendersBlock, renderReminder } from "./reminder.js";
import { renderSystemPrompt } from "./render.js";
import {
  type AnyContextProvider,
  type ContextBlock,
  detectProvider,
  type ProviderCapabilities,
  type SearchProvider,
  type SessionContextOptions,
  type SkillProvider,
  type WhenChanged,
  type WritableContextProvider,
} from "./types.js";

interface BlockState {
  label: string;
  description: string | undefined;
  maxTokens: number | undefined;
  provider: AnyContextProvider | undefined;
  caps: ProviderCapabilities;
  whenChanged: WhenChanged | undefined;
  content: string;
  initialised: boolean;
  /** The tail of this block's reads and writes: each waits for the one before (see `serialise`). */
  queue: Promise<void>;
}

// Every block write's content; anything but a string breaks `type`, a missing content too (as it always has).
const blockContent = refusedBy<string>(
  (value) => (typeof value === "string" ? undefined : "Block content must be a string"),
  () => "type",
);

/** The context blocks of one session, in registration order, with the reference's write rules. */
export class ContextBlocks {
  private readonly blocks = new Map<string, BlockState>();
  private readonly newLabel = newBlockLabel((label) => this.blocks.has(label));

  /** Declares a block (not loaded yet); a duplicate label is an error. */
  register(label: string, options: SessionContextOptions): void {
    parseInput(this.newLabel, label, { path: "label" });
    parseInput(contextOptions, options, { path: "options" });
    this.blocks.set(label, {
      label,
      description: options.description,
      maxTokens: options.maxTokens,
      provider: options.provider,
      caps: detectProvider(options.provider),
      whenChanged: options.whenChanged,
      content: "",
      initialised: false,
      queue: Promise.resolve(),
    });
  }

  /** Forgets a block; true when it existed. */
  remove(label: string): boolean {
    return this.blocks.delete(label);
  }

  has(label: string): boolean {
    return this.blocks.has(label);
  }

  /** (Re)reads one block from its provider, calling `init(label)` once before the first read. */
  async load(label: string): Promise<void> {
    const block = this.blocks.get(label);
    if (!block) return;
    // Queued with the writes, so a read that started before a write cannot overwrite its result with older text.
    await this.serialise(block, () => this.read(block));
  }

  /** A provider's failure becomes a `SessionError` naming the block (see `blockReadFailure`). */
  private async read(block: BlockState): Promise<void> {
    try {
      if (!block.initialised) {
        await block.provider?.init?.(block.label);
        block.initialised = true;
      }
      const content = block.provider ? await block.provider.get() : null;
      block.content = typeof content === "string" ? content : "";
    } catch (error) {
      throw blockReadFailure(error, block.label);
    }
  }

  /**
   * Runs `task` after every earlier read and write of the block has settled: parallel tool calls (the AI SDK runs
   * them concurrently) would otherwise each build their text from the same old content and keep only one write.
   */
  private serialise<T>(block: BlockState, task: () => Promise<T>): Promise<T> {
    const run = block.queue.then(task);
    block.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Reads every block from its provider. */
  async loadAll(): Promise<void> {
    for (const label of [...this.blocks.keys()]) await this.load(label);
  }

  private view(block: BlockState): ContextBlock {
    const view: ContextBlock = {
      label: block.label,
      content: block.content,
      tokens: estimateStringTokens(block.content),
      writable: block.caps.writable,
      isSkill: block.caps.isSkill,
      isSearchable: block.caps.isSearchable,
    };
    if (block.description !== undefined) view.description = block.description;
    if (block.maxTokens !== undefined) view.maxTokens = block.maxTokens;
    if (block.whenChanged !== undefined) view.whenChanged = block.whenChanged;
    return view;
  }

  /** One block as last loaded, or null. */
  get(label: string): ContextBlock | null {
    const block = this.blocks.get(label);
    return block ? this.view(block) : null;
  }

  /** Every block as last loaded, in registration order. */
  list(): ContextBlock[] {
    return [...this.blocks.values()].map((b) => this.view(b));
  }

  /** Labels of blocks with a capability. */
  labels(filter: (caps: ProviderCapabilities) => boolean): string[] {
    return [...this.blocks.values()].filter((b) => filter(b.caps)).map((b) => b.label);
  }

  /** The provider of a block (for keyed tools). */
  provider(label: string): AnyContextProvider | undefined {
    return this.blocks.get(label)?.provider;
  }

  /** Replaces a plain writable block's content, enforcing `maxTokens`. */
  async replace(label: string, content: string): Promise<ContextBlock> {
    parseInput(blockContent, content, { path: "content" });
    const block = this.plainWritable(label);
    return this.serialise(block, () => this.write(block, content));
  }

  /** Appends to a writable block (a newline between old and new unless old is empty or new starts with one). */
  async append(label: string, content: string): Promise<ContextBlock> {
    parseInput(blockContent, content, { path: "content" });
    if (!this.blocks.has(label)) throw new SessionError("NOT_FOUND", `Block "${label}" not found`);
    const block = this.plainWritable(label);
    return this.serialise(block, async () => {
      // The stored text, not the copy loaded at open: another Session (or process) may have written since.
      await this.read(block);
      const joined =
        block.content.length === 0 || content.startsWith("\n")
          ? block.content + content
          : `${block.content}\n${content}`;
      return this.write(block, joined);
    });
  }

  private plainWritable(label: string): BlockState {
    const block = this.blocks.get(label);
    if (!block?.caps.writable) throw new SessionError("READONLY", `Block "${label}" is readonly`);
    if (block.caps.isSkill || block.caps.isSearchable) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        `Block "${label}" is a keyed provider. Use setSkill() or setSearchEntry() instead.`,
        { issues: [{ path: "label", rule: "invalid" }] },
      );
    }
    return block;
  }

  // Call only inside `serialise`; `maxTokens` applies to the whole new text.
  private async write(block: BlockState, content: string): Promise<ContextBlock> {
    const tokens = estimateStringTokens(content);
    if (block.maxTokens !== undefined && tokens > block.maxTokens) {
      throw new SessionError(
        "TOKEN_LIMIT",
        `Block "${block.label}" exceeds maxTokens: ${tokens} > ${block.maxTokens}`,
        { issues: [{ path: "content", rule: "too_long" }] },
      );
    }
    await (block.provider as WritableContextProvider).set(content);
    block.content = content;
    return this.view(block);
  }

  /** Writes a keyed entry of a skill or search block and refreshes the block's listing. */
  async setKeyed(label: string, key: string, content: string, description?: string): Promise<ContextBlock> {
    const block = this.blocks.get(label);
    if (!block) throw new SessionError("NOT_FOUND", `Block "${label}" not found`);
    if (!block.caps.writable || !(block.caps.isSkill || block.caps.isSearchable)) {
      throw new SessionError("READONLY", `Block "${label}" is not a writable keyed block`);
    }
    const badKey = typeof key !== "string" || key.length === 0 || !isStorableId(key);
    if (badKey || typeof content !== "string") {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "A keyed entry needs a non-empty, well-formed string key (without U+0000) and string content",
        {
          issues: [
            { path: badKey ? "key" : "content", rule: badKey && typeof key === "string" ? "format" : "type" },
          ],
        },
      );
    }
    return this.serialise(block, async () => {
      if (block.caps.isSkill) await (block.provider as SkillProvider).set!(key, content, description);
      else await (block.provider as SearchProvider).set!(key, content);
      await this.read(block);
      return this.view(block);
    });
  }

  /**
   * Re-reads every `whenChanged: "remind"` block and returns, for those whose current section no longer appears in
   * `prompt` (the frozen prompt), their current values under a note that they replace the prompt's copies; null
   * when none changed. Nothing is written: the reminder is for the next model call only. A provider that fails
   * fails the reminder with a `SessionError` naming the block (see `blockReadFailure`), never with its raw error.
   */
  async reminder(prompt: string): Promise<string | null> {
    const changed: ContextBlock[] = [];
    for (const block of [...this.blocks.values()]) {
      if (block.whenChanged !== "remind") continue;
      await this.load(block.label);
      const view = this.view(block);
      if (!promptRendersBlock(prompt, view)) changed.push(view);
    }
    return renderReminder(changed);
  }

  /** The system prompt for the blocks as they are now. */
  render(): string {
    return renderSystemPrompt(this.list());
  }
}
