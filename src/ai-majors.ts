// What differs between the AI SDK majors agent-session supports (`ai` 6 and 7), adapted here and nowhere else.
//
// - A middleware (sessionMemory) is handed the provider spec of the model it wraps: ai@6 a LanguageModelV3 call
//   (file data as bytes, base64 or a URL), ai@7 a LanguageModelV4 call (file data tagged: `{ type: "data", data }`,
//   `{ type: "url", url }`, …; and `reasoning-file` parts). Sessions store the untagged form, what a ModelMessage
//   also holds, so a session written under either major reads the same under the other.
// - A step's `response.messages` holds every step's messages so far on ai@6 and only that step's on ai@7.
// Everything else the library uses (UIMessage, ModelMessage, the UI stream options, tools, `embedMany`) has the
// same shape on both.

/** The provider spec of a middleware call: "v4" when ai@7 wraps the model, else "v3". */
export type ModelSpec = "v3" | "v4";

/** The spec of the model a middleware's `transformParams` is given. */
export function specOf(model: unknown): ModelSpec {
  const version = (model as { specificationVersion?: unknown } | null | undefined)?.specificationVersion;
  return version === "v4" ? "v4" : "v3";
}

type Message = { role: string; content: unknown };
type Part = Record<string, unknown> & { type: string };

/** File data in the stored form (bytes, base64 or a URL); a V4 reference or inline text stays tagged. */
export function untaggedData(data: unknown): unknown {
  if (data === null || typeof data !== "object" || data instanceof Uint8Array || data instanceof URL)
    return data;
  const tagged = data as { type?: unknown; data?: unknown; url?: unknown };
  if (tagged.type === "data") return tagged.data;
  if (tagged.type === "url") return tagged.url;
  return data;
}

/** File data in the form `spec` takes. */
function specData(data: unknown, spec: ModelSpec): unknown {
  if (spec === "v3") return data;
  if (data instanceof URL) return { type: "url", url: data };
  if (typeof data === "string" || data instanceof Uint8Array) return { type: "data", data };
  return data;
}

const FILE_PARTS = new Set(["file", "reasoning-file"]);

/** A provider prompt with every file part's data untagged (the form sessions store and plans compare). */
export function fromSpec<M extends Message>(prompt: readonly M[]): M[] {
  return prompt.map((message) =>
    mapFileParts(message, (part) => ({ ...part, data: untaggedData(part.data) })),
  );
}

/**
 * A prompt in the stored form as `spec` takes it: tagged file data for V4; for V3, without the `reasoning-file`
 * parts it has no place for.
 */
export function toSpec<M extends Message>(prompt: readonly M[], spec: ModelSpec): M[] {
  return prompt.map((message) =>
    mapFileParts(message, (part) =>
      spec === "v3" && part.type === "reasoning-file" ? null : { ...part, data: specData(part.data, spec) },
    ),
  );
}

function mapFileParts<M extends Message>(message: M, map: (part: Part) => Part | null): M {
  if (!Array.isArray(message.content)) return message;
  const parts = message.content as Part[];
  if (!parts.some((part) => FILE_PARTS.has(part.type))) return message;
  const content = parts
    .map((part) => (FILE_PARTS.has(part.type) ? map(part) : part))
    .filter((part): part is Part => part !== null);
  return { ...message, content };
}

/**
 * The messages one step added, from its `response.messages` and the count of messages earlier steps added: the
 * whole list on ai@7, the part after that count on ai@6. `ai` is the loaded module: only ai@7 exports
 * `isStepCount` (the rename of `stepCountIs`, which both export).
 */
export function stepMessages<M>(ai: object, messages: readonly M[], earlier: number): M[] {
  return "isStepCount" in ai ? [...messages] : messages.slice(earlier);
}
