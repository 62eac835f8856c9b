/**
 * What `send()` accepts besides text: an AI SDK user `ModelMessage` (checked with the AI SDK's own
 * `userModelMessageSchema`, see `agent/input.ts`) or a UIMessage-style `{ role: "user", parts }`, whose text and
 * file parts are described here and turned into the ModelMessage content they stand for.
 */
import type { UserContent } from "ai";
import { z } from "zod";
import { mediaProblem } from "./media.js";

const unsupported = {
  error: (issue: { path?: PropertyKey[] | undefined }) =>
    `send() got an unsupported part at index ${String(issue.path?.[0])}: only "text" and "file" parts can be sent`,
};

const textPart = z
  .object({ type: z.literal("text"), text: z.string() })
  .transform(({ text }) => ({ type: "text" as const, text }));

// A file part carries its data as a URL (often a data: URL); a filename that is not a string is left out.
const filePart = z
  .object({
    type: z.literal("file"),
    url: z.string(),
    mediaType: z.string(),
    filename: z.unknown().optional(),
  })
  .transform(({ url, mediaType, filename }) => ({
    type: "file" as const,
    data: url,
    mediaType,
    ...(typeof filename === "string" ? { filename } : {}),
  }));

/** A UIMessage's `parts`, as the `content` of a user ModelMessage. */
export const uiParts = z
  .array(z.union([textPart, filePart], unsupported))
  .transform((parts): UserContent => parts);

/**
 * A user message's content whose image and file parts carry data a model can be sent (see `agent/media.ts`): the
 * AI SDK's schema takes any string there, and a bad one would fail every later call of the session. `fileField`
 * names a file part's data in the caller's input, for the issue's path: `data` in a ModelMessage's content, `url`
 * in the UIMessage parts it was made from.
 */
export const sendableContent = (fileField: "data" | "url" = "data") =>
  z.union([
    z.string(),
    z.array(z.unknown()).check((ctx) => {
      ctx.value.forEach((part, index) => {
        const { type, image, data } = (part ?? {}) as { type?: unknown; image?: unknown; data?: unknown };
        if (type !== "image" && type !== "file") return;
        const problem = mediaProblem(type === "image" ? image : data);
        if (problem === undefined) return;
        ctx.issues.push({
          code: "custom",
          input: part,
          path: [index, type === "image" ? "image" : fileField],
          message: `send() got ${type === "image" ? "an image" : "a file"} part at index ${index} whose data ${problem}`,
        });
      });
    }),
  ]);
