// Shared pieces of the OpenAI Agents SDK behaviour tests: a scripted model (plain and streamed), the sessions under
// test (the SDK's own MemorySession beside the adapter on every store), and small item builders.
import {
  type AgentInputItem,
  MemorySession,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Session as SdkSession,
  type StreamEvent,
  Usage,
} from "@openai/agents-core";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";
import { OpenAIAgentsSession } from "../../src/openai-agents/index.js";
import { postgresStores } from "../fixtures/postgres-stores.js";

type Output = ModelResponse["output"];

/** A model that answers each call with the next scripted output (a function sees the request), plain or streamed. */
export class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: Array<Output | ((request: ModelRequest) => Output)>) {}

  private next(request: ModelRequest): Output {
    this.requests.push(request);
    const step = this.script[this.requests.length - 1];
    if (step === undefined) throw new Error(`no scripted answer for call ${this.requests.length}`);
    return typeof step === "function" ? step(request) : step;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    return { usage: new Usage(), output: this.next(request), responseId: `r${this.requests.length}` };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const output = this.next(request);
    yield {
      type: "response_done",
      response: { id: `r${this.requests.length}`, usage: new Usage(), output },
    } as unknown as StreamEvent;
  }
}

/** The items a request gave the model. */
export function inputOf(request: ModelRequest | undefined): AgentInputItem[] {
  const input = request?.input;
  return typeof input === "string" ? [user(input)] : (input ?? []);
}

export const user = (text: string): AgentInputItem => ({ role: "user", content: text });

export const said = (text: string): Output[number] => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

export const call = (name: string, callId: string, args: object): Output[number] => ({
  type: "function_call",
  callId,
  name,
  arguments: JSON.stringify(args),
  status: "completed",
});

/** The text of a message item (user string content, or output/input text parts). */
export function textOf(item: AgentInputItem | undefined): string {
  const content = (item as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part as { text?: string }).text ?? "").join("");
}

export function kindOf(item: AgentInputItem): string {
  const { role, type } = item as { role?: string; type?: string };
  return role !== undefined ? `message:${role}` : (type ?? "?");
}

/** A fresh session of the kind under test. */
export type Open = (id: string) => SdkSession;

const postgres = await postgresStores("openai_agents_sdk");

/** The SDK's MemorySession (the reference the adapter is held to) and the adapter on memory, SQLite and Postgres. */
export function sessionKinds(): Array<[string, Open, (() => SessionStore) | null]> {
  const adapter = (create: () => SessionStore) => {
    const store = create();
    return (id: string) => new OpenAIAgentsSession(store, id);
  };
  const kinds: Array<[string, Open, (() => SessionStore) | null]> = [
    ["the SDK's MemorySession", (id) => new MemorySession({ sessionId: id }), null],
    ["adapter on memory", adapter(() => new MemoryStore()), () => new MemoryStore()],
    ["adapter on SQLite", adapter(() => new SqliteStore(":memory:")), () => new SqliteStore(":memory:")],
  ];
  if (postgres) kinds.push(["adapter on Postgres", adapter(postgres), postgres]);
  return kinds;
}

export { Session };
