import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  convertToModelMessages,
  DefaultChatTransport,
  type LanguageModel,
  streamText,
  type ToolSet,
  type UIMessage,
} from "ai";
import { type ChatRequestBody, persistChatTurn } from "../../src/ai-sdk/index.js";
import { Session, type SessionStore } from "../../src/index.js";

/** `useChat`'s state machine without React: the AI SDK's own AbstractChat over a plain array. */
export class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  constructor(public messages: UIMessage[]) {}
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The route of the README: the whole conversation in, the answer streamed and stored on finish. */
export function chatRoute(store: SessionStore, model: LanguageModel, tools: ToolSet = {}) {
  return async (request: Request): Promise<Response> => {
    const { id, messages, trigger, messageId } = (await request.json()) as ChatRequestBody;
    const turn = await persistChatTurn(Session.create(store).forSession(id), {
      messages,
      trigger,
      messageId,
    });
    const result = streamText({ model, messages: await convertToModelMessages(turn.messages), tools });
    return result.toUIMessageStreamResponse(turn.streamOptions);
  };
}

/** A `useChat` client whose fetch calls `route` in-process. */
export class NodeChat extends AbstractChat<UIMessage> {
  constructor(id: string, route: (request: Request) => Promise<Response>, messages: UIMessage[] = []) {
    super({
      id,
      state: new ArrayState(messages),
      transport: new DefaultChatTransport({
        api: "http://chat.test/api/chat",
        fetch: async (url, init) => route(new Request(url, init)),
      }),
      onError: (error) => {
        throw error;
      },
    });
  }
}

/** The text of a message's text parts. */
export function textOf(
  message: { parts: ReadonlyArray<{ type: string; text?: string }> } | undefined,
): string {
  return (message?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text ?? ""] : [])).join("");
}
