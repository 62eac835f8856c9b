import type { LanguageModelMiddleware } from "ai";
import { withReminder } from "../agent/reminder.js";
import { fromSpec, specOf, toSpec } from "../ai-majors.js";
import { SessionError } from "../errors.js";
import { SessionManager } from "../manager/manager.js";
import { Session } from "../session/session.js";
import { answerOf, toStored } from "./memory-messages.js";
import { type CallPlan, planCall } from "./memory-plan.js";
import { recallQuery, recallSection } from "./memory-recall.js";
import { type MemorySettings, memorySettings, type SessionMemoryOptions } from "./memory-settings.js";
import { storingStream } from "./memory-stream.js";
import type { CallOptions, Content, Prompt } from "./memory-types.js";
import { contextReminder } from "./reminder.js";

export type { SessionMemoryOptions };

/** The memory middleware, with a way to wait for the facts it learns (`learn`). */
export type SessionMemoryMiddleware = LanguageModelMiddleware & {
  /** Resolves once the facts of the calls so far are learned (with `learn`; at once without it). */
  learned(): Promise<void>;
};

/**
 * AI SDK memory middleware for one conversation: `wrapLanguageModel({ model, middleware: sessionMemory(...) })`
 * gives every call the session's stored history (with the context reminder and, when asked, recall hits) and
 * stores the call's new messages and its answer once the model answered (docs/AI-SDK.md, "Memory middleware");
 * with `learn`, facts are learned from the stored exchanges in the background.
 */
export function sessionMemory(options: SessionMemoryOptions): SessionMemoryMiddleware {
  const settings = memorySettings(options);
  const memory = new Memory(settings);
  // wrapLanguageModel hands wrapGenerate/wrapStream the params object transformParams returned: the key of the plan.
  const plans = new WeakMap<CallOptions, CallPlan>();
  const planOf = (params: CallOptions): CallPlan => {
    const plan = plans.get(params);
    if (plan === undefined) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "sessionMemory: a call reached the model without its plan; use the middleware through wrapLanguageModel",
        { issues: [{ path: "", rule: "invalid" }] },
      );
    }
    return plan;
  };
  return {
    learned: async () => {
      await settings.learning?.idle();
    },
    specificationVersion: "v3",
    // ai@6 calls it with a LanguageModelV3 call, ai@7 with a V4 one: planned and stored in one form (ai-majors.ts).
    transformParams: async ({ params, model }) => {
      const { plan, prompt } = await memory.plan(fromSpec(params.prompt));
      const transformed = { ...params, prompt: toSpec(prompt, specOf(model)) };
      plans.set(transformed, plan);
      return transformed;
    },
    wrapGenerate: async ({ doGenerate, params }) => {
      const plan = planOf(params);
      const result = await doGenerate();
      await memory.save(plan, result.content);
      return result;
    },
    wrapStream: async ({ doStream, params }) => {
      const plan = planOf(params);
      const result = await doStream();
      return { ...result, stream: storingStream(result.stream, (content) => memory.save(plan, content)) };
    },
  };
}

/** The conversation the middleware serves, and what it does before and after each call. */
class Memory {
  private opened: Promise<Session> | undefined;
  private manager: SessionManager | undefined;

  constructor(private readonly settings: MemorySettings) {}

  /** The session: given, or opened once (through the owner's view when there is an owner). */
  private session(): Promise<Session> {
    const { source } = this.settings;
    if (source.kind === "session") return Promise.resolve(source.session);
    this.opened ??= (async () => {
      if (source.owner === undefined) return Session.create(source.store).forSession(source.sessionId);
      this.manager = new SessionManager(source.store);
      return (await this.manager.forOwner(source.owner).open(source.sessionId)) as Session;
    })();
    // A failed open (another owner's session) is tried again on the next call rather than remembered.
    this.opened.catch(() => {
      this.opened = undefined;
    });
    return this.opened;
  }

  /** The call's plan and the prompt the model gets. */
  async plan(appPrompt: Prompt[]): Promise<{ plan: CallPlan; prompt: Prompt[] }> {
    const session = await this.session();
    const plan = await planCall(session, appPrompt, this.settings.history);
    const sections: string[] = [];
    if (plan.truncated) {
      const { maxMessages, maxTokens } = this.settings.history;
      sections.push(
        `Earlier messages of this conversation are left out of this prompt (the history budget is ${maxMessages} ` +
          `messages and ${maxTokens} tokens).`,
      );
    }
    const recalled = await this.recall(session, plan);
    if (recalled !== null) sections.push(recalled);
    const reminder = this.settings.reminder ? await contextReminder(session) : null;
    // User text is neutralised (no line of it can pass for a reminder) and the reminder ends the latest user message.
    const messages = withReminder(plan.messages as never, reminder) as unknown as Prompt[];
    const memory: Prompt[] =
      sections.length === 0 ? [] : [{ role: "system", content: sections.join("\n\n") }];
    return { plan, prompt: [...plan.system, ...memory, ...messages] };
  }

  /** The recall section for the call's latest user message, or null (recall off, no user text, no hit). */
  private async recall(session: Session, plan: CallPlan): Promise<string | null> {
    const recall = this.settings.recall;
    if (recall === null) return null;
    const query = recallQuery(plan.fresh);
    if (query === null) return null;
    // Hits already in the prompt are left out, so ask for enough to still fill the limit (bounded by the search).
    const limit = Math.min(recall.limit + plan.historyIds.size, 200);
    const { source } = this.settings;
    const hits =
      recall.scope === "owner" && source.kind === "store" && source.owner !== undefined
        ? await (this.manager ?? new SessionManager(source.store))
            .forOwner(source.owner)
            .search(query, { limit })
        : await session.search(query, { limit });
    return recallSection(hits, plan.historyIds, recall, session.sessionId);
  }

  /**
   * Stores the call's new messages and its answer, in order, under the leaf the call was planned on. The first
   * write expects that leaf still to be the session's latest, so a conversation written meanwhile (another call of
   * the same session) is a `CONFLICT` rather than an interleaved path.
   */
  async save(plan: CallPlan, content: readonly Content[]): Promise<void> {
    const session = await this.session();
    const answer = answerOf(content);
    let parentId = plan.parentId;
    let first = true;
    for (const message of answer === null ? plan.fresh : [...plan.fresh, answer]) {
      const stored = toStored(message);
      await session.appendMessage(stored, parentId, first ? { expectedLeafId: parentId } : undefined);
      parentId = stored.id;
      first = false;
    }
    // In the background, once the exchange is stored: the call's answer does not wait for it.
    this.settings.learning?.kick();
  }
}
