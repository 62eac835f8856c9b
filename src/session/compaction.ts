import type { SessionMessage, StoredCompaction } from "../contract/message.js";
import type { SessionProvider } from "../contract/provider.js";
import { errorMessage, SessionError } from "../errors.js";
import { isCompactionMessage, overlayMessage } from "../message/overlay.js";
import { estimateMessageTokens, estimateStringTokens } from "../message/tokens.js";
import { emitWarning } from "../runtime/warn.js";
import type { CompactFunction, PlanningCompactFunction } from "../utils/compaction-helpers.js";
import { compactionSkip } from "./compaction-skip.js";
import type {
  CompactionPlan,
  CompactionReport,
  CompactionSetup,
  CompactionSkip,
  SessionTokenCounter,
} from "./compaction-types.js";
import type { SessionContext } from "./context.js";

const finite = (value: number): number => (Number.isFinite(value) ? Math.max(0, Math.ceil(value)) : 0);

/** The process-warning type of automatic compaction's reports (it never fails the append that triggered it). */
const COMPACTION_WARNING = "AgentSessionCompactionWarning";

/** Runs compaction for one session: manual `compact()`, dry runs, and the automatic check after appends. */
export class Compactor {
  private running: Promise<unknown> | undefined;
  private nullWarned = false;
  private promptTokens: { prompt: string; tokens: number } | undefined;

  constructor(
    private readonly setup: CompactionSetup,
    private readonly provider: SessionProvider,
    private readonly context: SessionContext,
  ) {}

  /** The counter handed to compaction functions (per-message calls use an empty prompt and no blocks). */
  private get counter(): SessionTokenCounter | undefined {
    return this.setup.tokenCounter;
  }

  /**
   * Estimated tokens of the next model call: history (overlays applied) plus the frozen system prompt. Without a
   * custom counter this is O(1) on stores with running totals; a custom counter receives the messages, so it
   * reads the history.
   */
  async estimate(leafId?: string | null): Promise<number> {
    const systemPrompt = await this.context.promptForEstimate();
    if (this.counter) {
      const messages = await this.provider.getHistory(leafId);
      return finite(
        await this.counter({ messages, systemPrompt, contextBlocks: this.context.blocks.list() }),
      );
    }
    const history = this.provider.getContextTokens
      ? await this.provider.getContextTokens(leafId)
      : estimateMessageTokens(await this.provider.getHistory(leafId));
    if (this.promptTokens?.prompt !== systemPrompt) {
      this.promptTokens = { prompt: systemPrompt, tokens: estimateStringTokens(systemPrompt) };
    }
    return history + this.promptTokens.tokens;
  }

  private requireFunction(): CompactFunction {
    if (!this.setup.fn) {
      throw new SessionError("UNSUPPORTED", "No compaction function registered. Call onCompaction() first.");
    }
    return this.setup.fn;
  }

  private compactContext() {
    const counter = this.counter;
    return counter ? { tokenCounter: counter } : {};
  }

  /** After a write: the reference's idle frame with the current estimate (when broadcasting); returns it. */
  async broadcastIdle(): Promise<number | undefined> {
    const frames = this.setup.frames;
    if (!frames) return undefined;
    const estimate = await this.estimate();
    frames.status("idle", estimate, this.setup.threshold);
    return estimate;
  }

  /**
   * Compacts the path to `leafId` (default: the active branch) and reports what was stored, or null. When
   * broadcasting: a `compacting` frame first (its estimate is `tokensBefore`), then `idle` — with
   * `compacted: { tokensBefore }` when an overlay was stored — or an error frame when the summariser failed.
   */
  async compact(leafId?: string | null): Promise<CompactionReport | null> {
    const frames = this.setup.frames;
    if (!frames) return this.compactQuietly(leafId);
    this.requireFunction();
    const tokensBefore = await this.estimate(leafId);
    frames.status("compacting", tokensBefore, this.setup.threshold);
    let report: CompactionReport | null;
    try {
      report = await this.compactQuietly(leafId);
    } catch (error) {
      // A refused result stored nothing, like the reference's null result: idle. Anything else failed.
      if (error instanceof SessionError && error.code === "COMPACTION_REFUSED") {
        frames.status("idle", await this.estimate(leafId), this.setup.threshold);
      } else {
        frames.error(error);
      }
      throw error;
    }
    const after = await this.estimate(leafId);
    frames.status("idle", after, this.setup.threshold, report ? { tokensBefore } : undefined);
    return report;
  }

  private async compactQuietly(leafId?: string | null): Promise<CompactionReport | null> {
    const fn = this.requireFunction();
    const history = await this.provider.getHistory(leafId);
    const result = await fn(history, this.compactContext());
    if (!result) return null;
    const stored = await this.provider.getCompactions();
    const range = this.resolveRange(history, stored, result.fromMessageId, result.toMessageId);
    const summary = result.summary;
    if (typeof summary !== "string" || summary.trim().length === 0) {
      throw new SessionError(
        "COMPACTION_REFUSED",
        "Compaction refused: the summary is blank; nothing was stored",
      );
    }
    const overlayTokens = estimateMessageTokens([
      { id: "compaction_", role: "assistant", parts: [{ type: "text", text: summary }] },
    ]);
    if (overlayTokens >= range.tokensReplaced) {
      throw new SessionError(
        "COMPACTION_REFUSED",
        `Compaction refused: the summary (${overlayTokens} tokens) is not smaller than the ${range.tokensReplaced} tokens it would replace; nothing was stored`,
      );
    }
    const tokensBefore = estimateMessageTokens(history);
    const details = {
      coveredMessages: await this.coveredMessages(range.from, result.toMessageId),
      tokensBefore,
      tokensAfter: tokensBefore - range.tokensReplaced + overlayTokens,
      summaryTokens: estimateStringTokens(summary),
      summaryChars: summary.length,
    };
    const compaction = await this.provider.addCompaction(summary, range.from, result.toMessageId, details);
    await this.context.refresh();
    return {
      fromMessageId: range.from,
      toMessageId: result.toMessageId,
      summary,
      id: compaction.id,
      ...details,
    };
  }

  /** What `compact()` would do, without calling the model; needs a function with `plan()` (createCompactFunction). */
  async plan(leafId?: string | null): Promise<CompactionPlan | null> {
    const fn = this.requireFunction() as Partial<PlanningCompactFunction>;
    if (typeof fn.plan !== "function") {
      throw new SessionError(
        "UNSUPPORTED",
        "A dry run needs a compaction function with plan(), such as one from createCompactFunction()",
      );
    }
    const history = await this.provider.getHistory(leafId);
    const planned = await fn.plan(history, this.compactContext());
    if (!planned) return null;
    const range = this.resolveRange(
      history,
      await this.provider.getCompactions(),
      planned.fromMessageId,
      planned.toMessageId,
    );
    return {
      dryRun: true,
      compacts: true,
      fromMessageId: range.from,
      toMessageId: planned.toMessageId,
      coveredMessages: await this.coveredMessages(range.from, planned.toMessageId),
      tokensBefore: estimateMessageTokens(history),
      tokensReplaced: range.tokensReplaced,
      summaryBudget: planned.summaryBudget,
      iterative: range.iterative,
    };
  }

  /** The plan, or why there is none (the reason and the numbers); needs a function with `plan()`. */
  async explain(leafId?: string | null): Promise<CompactionPlan | CompactionSkip> {
    const planned = await this.plan(leafId);
    if (planned !== null) return planned;
    const history = await this.provider.getHistory(leafId);
    const fn = this.setup.fn as Partial<PlanningCompactFunction>;
    return compactionSkip(history, estimateMessageTokens(history), fn.settings);
  }

  /**
   * Where the new overlay starts (extended to the oldest overlay still visible on this branch, so iterative
   * compaction replaces earlier summaries) and the tokens of the visible messages it replaces.
   */
  private resolveRange(history: SessionMessage[], stored: StoredCompaction[], fromId: string, toId: string) {
    const ids = new Set(history.map((m) => m.id));
    const end = history.findIndex((m) => m.id === toId);
    if (end < 0 || isCompactionMessage({ id: toId })) {
      throw new SessionError(
        "COMPACTION_REFUSED",
        `Compaction refused: "${toId}" is not a message on this branch`,
      );
    }
    const visible = stored.filter(
      (c) => ids.has(`compaction_${c.id}`) || (ids.has(c.fromMessageId) && ids.has(c.toMessageId)),
    );
    const from = visible[0]?.fromMessageId ?? fromId;
    const overlayIds = new Set(
      stored.filter((c) => c.fromMessageId === from).map((c) => overlayMessage(c).id),
    );
    const start = history.findIndex((m) => m.id === from || overlayIds.has(m.id));
    if (start < 0 || start > end) {
      throw new SessionError(
        "COMPACTION_REFUSED",
        `Compaction refused: "${fromId}" does not precede "${toId}" on this branch`,
      );
    }
    return {
      from,
      tokensReplaced: estimateMessageTokens(history.slice(start, end + 1)),
      iterative: visible.length > 0,
    };
  }

  private async coveredMessages(fromId: string, toId: string): Promise<number> {
    return (await this.provider.getPathLength(toId)) - (await this.provider.getPathLength(fromId)) + 1;
  }

  /**
   * After an inserted append: compact when the estimate (`known`: the one just broadcast) is above the threshold;
   * never throws. True when an overlay was stored.
   */
  async afterAppend(known?: number): Promise<boolean> {
    const { threshold, fn } = this.setup;
    if (threshold === undefined || !fn || this.running) return false;
    let compacted = false;
    const run = (async () => {
      try {
        if ((known ?? (await this.estimate())) <= threshold) return;
        const report = await this.compact();
        compacted = report !== null;
        if (report === null && !this.nullWarned) {
          this.nullWarned = true;
          emitWarning(
            `the estimate is above compactAfter(${threshold}) but the compaction function returned null (nothing to compact, or a blank summary; session.explainCompaction() says why)`,
            COMPACTION_WARNING,
          );
        } else if (report !== null) {
          this.nullWarned = false;
        }
      } catch (error) {
        await this.report(error);
      }
    })();
    this.running = run;
    try {
      await run;
    } finally {
      this.running = undefined;
    }
    return compacted;
  }

  private async report(error: unknown): Promise<void> {
    if (!this.setup.onError) {
      emitWarning(error, COMPACTION_WARNING, "automatic compaction failed (the message was stored)");
      return;
    }
    try {
      await this.setup.onError(error);
    } catch (handlerError) {
      emitWarning(
        handlerError,
        COMPACTION_WARNING,
        `the onCompactionError handler threw while handling "${errorMessage(error)}"`,
      );
    }
  }
}
