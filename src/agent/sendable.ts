import type { ModelMessage } from "ai";
import { mediaProblem, remoteUrl } from "./media.js";
import { type MessageSchema, storableToolResults } from "./tool-output.js";
import type { AgentMessage } from "./types.js";

/** What a stored message is checked against before it is sent again. */
export interface SendableOptions {
  /** The AI SDK's `modelMessageSchema`, which every model call checks the whole history against. */
  schema: MessageSchema;
  /** http(s) URLs of media that could not be downloaded, with why (see `AgentSession`'s download). */
  unavailable: ReadonlyMap<string, string>;
}

type Part = Record<string, unknown>;

// Stored messages that passed the schema and media checks: each is checked once per process, not once per call.
const checked = new WeakSet<AgentMessage>();

const note = (text: string): Part => ({ type: "text", text: `[${text}]` });

const withContent = (message: AgentMessage, content: unknown): AgentMessage =>
  ({ ...message, content }) as AgentMessage;

/** A user message's image and file parts whose data cannot be sent, as text notes saying so. */
function withoutBadMedia(message: AgentMessage): AgentMessage {
  if (message.role !== "user" || !Array.isArray(message.content)) return message;
  let changed = false;
  const content = (message.content as unknown as Part[]).map((part) => {
    if (part.type !== "image" && part.type !== "file") return part;
    const problem = mediaProblem(part.type === "image" ? part.image : part.data);
    if (problem === undefined) return part;
    changed = true;
    return note(`${part.type} of message ${message.id} omitted: its data ${problem}`);
  });
  return changed ? withContent(message, content) : message;
}

/** `message` with the media the model could not be given replaced by notes naming the URL and why. */
function withoutUnavailable(message: AgentMessage, unavailable: ReadonlyMap<string, string>): AgentMessage {
  if (!Array.isArray(message.content)) return message;
  let changed = false;
  const swap = (type: string, data: unknown): Part | undefined => {
    const url = remoteUrl(data);
    const why = url === undefined ? undefined : unavailable.get(url);
    if (why === undefined) return undefined;
    changed = true;
    return note(`${type} ${url} of message ${message.id} omitted: it could not be downloaded (${why})`);
  };
  const content = (message.content as unknown as Part[]).map((part) => {
    if (part.type === "image" || part.type === "file")
      return swap(part.type, part.type === "image" ? part.image : part.data) ?? part;
    const output = part.output as { type?: unknown; value?: unknown } | undefined;
    if (part.type !== "tool-result" || output?.type !== "content" || !Array.isArray(output.value))
      return part;
    const value = (output.value as Part[]).map((item) =>
      item.type === "image-url" || item.type === "file-url"
        ? (swap(String(item.type), item.url) ?? item)
        : item,
    );
    return { ...part, output: { ...output, value } };
  });
  return changed ? withContent(message, content) : message;
}

const modelFields = (message: AgentMessage) => ({
  role: message.role,
  content: message.content,
  ...(message.providerOptions !== undefined ? { providerOptions: message.providerOptions } : {}),
});

/**
 * A stored message as it can be sent: media that cannot be decoded or downloaded become text notes, a tool result
 * the schema refuses becomes an error result, and a message still refused becomes a note (a tool message is left
 * out, and its calls get the usual missing-result answer). One such message, stored before these checks or pointing
 * at a URL that expired, would otherwise fail every later model call of the session.
 */
export function sendable(message: AgentMessage, options: SendableOptions): AgentMessage | undefined {
  let out = message;
  if (!checked.has(message)) {
    out = withoutBadMedia(message);
    if (!options.schema.safeParse(modelFields(out)).success) {
      out = withContent(out, storableToolResults(modelFields(out) as ModelMessage, options.schema).content);
      if (!options.schema.safeParse(modelFields(out)).success) {
        if (message.role === "tool") return undefined;
        out = withContent(out, `[message ${message.id} omitted: it is not a valid ${message.role} message]`);
      }
    }
    if (out === message) checked.add(message);
  }
  return options.unavailable.size > 0 ? withoutUnavailable(out, options.unavailable) : out;
}
