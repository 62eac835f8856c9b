import type { ToolSet } from "ai";
import { errorMessage, SessionError } from "../errors.js";
import { parseInput } from "../schema/parse.js";
import { normalize } from "./codec.js";
import { type AgentCompactOptions, summarize } from "./compaction.js";
import { modelContext } from "./context.js";
import { rememberingDownload } from "./download.js";
import { EventChannel } from "./events.js";
import { newId } from "./ids.js";
import { type SendInput, toUserMessage } from "./input.js";
import { compactOptions } from "./input-schema.js";
import { closeRunningTurn } from "./recover.js";
import { turnReminder, withReminder } from "./reminder.js";
import { closeInterruptedTurn, missingResultsMessage, pendingToolCalls } from "./repair.js";
import type { AgentSessionConfig } from "./session-config.js";
import { streamTurn, type TurnResult } from "./turn.js";
import { turnStatus, withTurn } from "./turn-status.js";
import type { AgentEvent, AgentMessage, AgentSessionUsage } from "./types.js";
import { lastStepInputTokens, summarizeUsage, sumUsage } from "./usage.js";

export type { AgentSessionConfig, AutoCompaction, SessionMemory } from "./session-config.js";

interface RunningTurn {
  events: EventChannel<AgentEvent>;
  done: Promise<void>;
}

/** A conversation with a model: `send()` a message, then read the turn's events from `receive()`. */
export class AgentSession implements AsyncDisposable {
  private current: RunningTurn | undefined;
  private busy = false;
  private closed = false;
  /** Aborts whatever holds the session (a turn from the moment send() claims it, or a compaction). */
  private controller = new AbortController();
  /** Settles when the session is idle again, so close() can wait for a send() that is still storing. */
  private idle: Promise<void> = Promise.resolve();
  private release: () => void = () => {};
  /** Media URLs that could not be downloaded, with why: sent as notes from then on (see rememberingDownload). */
  private readonly unavailable = new Map<string, string>();

  constructor(private readonly config: AgentSessionConfig) {}

  /** The session id (use it with `resume`). */
  get id(): string {
    return this.config.record.id;
  }

  /** True while a turn (or a compaction) is running. */
  get running(): boolean {
    return this.busy;
  }

  /**
   * Stores the user message, then starts the turn in the background; resolves once the message is stored. Rejects
   * with `CONFLICT` while a turn is running, `CLOSED` after close(), `INVALID_MESSAGE` for a malformed message.
   */
  async send(input: SendInput): Promise<void> {
    const user = toUserMessage(input, this.config.ai.userModelMessageSchema);
    const controller = this.claim("send()");
    const { record } = this.config;
    let turn: number;
    try {
      // A turn whose end could not be stored is closed first, as a resume would close it.
      await closeRunningTurn(record, "its end could not be stored");
      // Calls left unanswered by the previous turn (tools without `execute`) get error results first.
      turn = (turnStatus(record.metadata)?.number ?? 0) + 1;
      const pending = pendingToolCalls(record.messages);
      const before = pending.length > 0 ? [missingResultsMessage(pending, turn - 1)] : [];
      const message: AgentMessage = { ...user, id: newId("msg"), createdAt: Date.now(), metadata: { turn } };
      const status = { number: turn, status: "running", startedAt: Date.now() } as const;
      await record.append([...before, message], { metadata: withTurn(record.metadata, status) });
    } catch (error) {
      this.unclaim();
      throw error;
    }
    // Once the message is stored the turn runs, even if close() came meanwhile: it then ends "interrupted" at once.
    const events = new EventChannel<AgentEvent>();
    this.current = { events, done: this.runTurn(turn, events, controller) };
  }

  /** The events of the latest turn from its start, ending with its `stop` event; empty before the first send(). */
  async *receive(): AsyncGenerator<AgentEvent> {
    const current = this.current;
    if (current) yield* current.events.read();
  }

  /** Every stored message (copies), including agent-session's synthetic ones (see `metadata.synthetic`). */
  getMessages(): AgentMessage[] {
    return normalize([...this.config.record.messages]);
  }

  /** The usage ledger and its totals. */
  getUsage(): AgentSessionUsage {
    return summarizeUsage(normalize([...this.config.record.entries]));
  }

  /** Stops the running turn; its completed steps stay stored and it ends with reason "interrupted". */
  interrupt(): void {
    if (this.busy) this.controller.abort();
  }

  /**
   * Summarises older messages into a marker so later calls send the summary plus the recent tail; nothing is
   * deleted. Returns the marker, or undefined when there was too little to summarise. The call is in the ledger.
   */
  async compact(options?: AgentCompactOptions | null): Promise<AgentMessage | undefined> {
    const checked = (parseInput(compactOptions, options) ?? {}) as AgentCompactOptions;
    const controller = this.claim("compact()");
    const turn = turnStatus(this.config.record.metadata)?.number ?? 0;
    try {
      return await this.compactNow(checked, turn, controller.signal);
    } catch (error) {
      if (error instanceof SessionError) throw error;
      throw new SessionError(
        "COMPACTION_REFUSED",
        `Compaction failed, nothing was stored: ${errorMessage(error)}`,
        { cause: error },
      );
    } finally {
      this.unclaim();
    }
  }

  private async compactNow(
    options: AgentCompactOptions,
    turn: number,
    signal?: AbortSignal,
  ): Promise<AgentMessage | undefined> {
    const { ai, model, record, pricing } = this.config;
    const found = await summarize({
      ai,
      model,
      messages: record.messages,
      options,
      turn,
      pricing,
      ...(signal ? { abortSignal: signal } : {}),
    });
    if (!found) return undefined;
    await record.append([found.marker], { usage: [found.entry] });
    return normalize(record.messages[record.messages.length - 1]);
  }

  /** Resolves once the facts of the turns so far are learned (with the `learn` option; at once without it). */
  async learned(): Promise<void> {
    await this.config.learning?.idle();
  }

  /** Interrupts a running turn, waits until it is closed in storage, stops learning, and refuses further sends. */
  async close(): Promise<void> {
    this.closed = true;
    this.interrupt();
    await this.idle;
    await this.config.learning?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Marks the session busy for one operation and returns the controller that interrupts it. */
  private claim(action: string): AbortController {
    if (this.closed) throw new SessionError("CLOSED", `${action} on a closed session (${this.id})`);
    if (this.busy) {
      throw new SessionError(
        "CONFLICT",
        `${action} while a turn is running in session ${this.id}: read receive() to its "stop" event, or interrupt()`,
      );
    }
    this.busy = true;
    this.controller = new AbortController();
    this.idle = new Promise((resolve) => {
      this.release = resolve;
    });
    return this.controller;
  }

  private unclaim(): void {
    this.busy = false;
    this.release();
  }

  private async runTurn(
    turn: number,
    events: EventChannel<AgentEvent>,
    controller: AbortController,
  ): Promise<void> {
    const { record } = this.config;
    const ledgerStart = record.entries.length;
    let result: TurnResult = { reason: "interrupted", failure: "the caller interrupted it" };
    try {
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.compactIfDue(turn, events, controller.signal);
      const call = await this.prepare(events);
      // A failed download is retried with a note in that medium's place, until a call gets past its downloads.
      for (let retry = true; retry; ) {
        const [known, stored] = [this.unavailable.size, record.messages.length];
        const messages = withReminder(this.context().messages, call.reminder);
        const download = rememberingDownload(this.config.ai, this.unavailable, controller.signal);
        result = await streamTurn({ ...this.config, ...call, messages, events, turn, controller, download });
        retry = result.reason === "error" && !controller.signal.aborted && this.unavailable.size > known;
        retry &&= record.messages.length === stored;
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        events.push({ type: "error", error, message: errorMessage(error) });
        result = { reason: "error", failure: `an error occurred (${errorMessage(error)})` };
      }
    }
    await this.closeTurn(turn, result, events);
    this.config.learning?.kick();
    // Idle before the stop event, so a reader may send() as soon as it sees it.
    this.unclaim();
    events.push({
      type: "stop",
      turn,
      reason: result.reason,
      ...(result.finishReason ? { finishReason: result.finishReason } : {}),
      usage: sumUsage(record.entries.slice(ledgerStart)),
      totalUsage: sumUsage(record.entries),
    });
    events.end();
  }

  /** Compacts before a turn once the last call's input reached the `compaction` option's limit. */
  private async compactIfDue(turn: number, events: EventChannel<AgentEvent>, signal: AbortSignal) {
    const { compaction } = this.config;
    if (!compaction || lastStepInputTokens(this.config.record.entries) < compaction.maxInputTokens) return;
    try {
      await this.compactNow(compaction, turn, signal);
    } catch (error) {
      // A failed compaction costs context room, not the turn: the full history is still valid.
      events.push({ type: "error", error, message: `Compaction failed: ${errorMessage(error)}` });
    }
  }

  /** The call's system prompt and tools (own prompt, memory prompt and tools, summary) and the memory reminder. */
  private async prepare(events: EventChannel<AgentEvent>) {
    const { memory } = this.config;
    const memoryPrompt = memory ? await memory.freezeSystemPrompt() : undefined;
    // The caller's own tools win over memory tools of the same name.
    const tools = memory ? { ...(await memory.tools()), ...this.config.tools } : this.config.tools;
    const { summary } = this.context();
    const summaryPrompt = summary ? `Summary of the earlier conversation:\n${summary}` : undefined;
    const system = [this.config.systemPrompt, memoryPrompt, summaryPrompt]
      .filter((part) => part)
      .join("\n\n");
    // Read once per turn, so every step of the turn sends the same prefix; never stored.
    const reminder = await turnReminder(memory, (error) =>
      events.push({ type: "error", error, message: `Context reminder skipped: ${error.message}` }),
    );
    return { system: system || undefined, tools: tools as ToolSet | undefined, reminder };
  }

  /** The stored history as the model is sent it, with notes for media that could not be decoded or downloaded. */
  private context() {
    const { ai, record } = this.config;
    return modelContext(record.messages, { schema: ai.modelMessageSchema, unavailable: this.unavailable });
  }

  /** Stores the turn's end: its status and, for a turn that did not complete, the messages that close it. */
  private async closeTurn(turn: number, result: TurnResult, events: EventChannel<AgentEvent>): Promise<void> {
    const { record } = this.config;
    // A step whose write was in flight when the turn stopped must be in the history the closing is computed from.
    await record.settled();
    const completed = result.reason !== "error" && result.reason !== "interrupted";
    const closing = completed
      ? []
      : closeInterruptedTurn(record.messages, turn, result.failure ?? "it stopped");
    const previous = turnStatus(record.metadata);
    const status = {
      number: turn,
      status: completed ? "done" : "interrupted",
      startedAt: previous?.startedAt ?? Date.now(),
      endedAt: Date.now(),
      stopReason: result.reason,
    } as const;
    try {
      await record.append(closing, { metadata: withTurn(record.metadata, status) });
      const stored = closing.length > 0 ? record.messages.slice(-closing.length) : [];
      for (const message of stored) events.push({ type: "message", message: normalize(message) });
    } catch (error) {
      // Storage still says "running": the next send() or resume closes the turn the same way.
      events.push({
        type: "error",
        error,
        message: `Could not store the end of the turn: ${errorMessage(error)}`,
      });
    }
  }
}
