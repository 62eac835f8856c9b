import type { LanguageModelMiddleware } from "ai";

// The provider-level (V3) types the middleware works with, derived from the `ai` package's own middleware type:
// `@ai-sdk/provider`, which declares them, is only a transitive dependency of `ai`.

type Defined<T> = Exclude<T, undefined>;

/** One model call's options, as a middleware sees them. */
export type CallOptions = Parameters<Defined<LanguageModelMiddleware["transformParams"]>>[0]["params"];
/** One message of the provider prompt. */
export type Prompt = CallOptions["prompt"][number];
/** One piece of a `doGenerate` answer (text, reasoning, a tool call, …). */
export type Content = Awaited<
  ReturnType<Defined<LanguageModelMiddleware["wrapGenerate"]>>
>["content"][number];
type StreamResult = Awaited<ReturnType<Defined<LanguageModelMiddleware["wrapStream"]>>>;
/** One part of a `doStream` answer. */
export type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;
