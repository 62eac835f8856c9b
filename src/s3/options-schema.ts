/**
 * The inputs of the bucket skill providers as schemas: a skill key, the shared options (prefix, allow-list), the
 * listing page size, an S3 source and a skill's content. A refusal is `INVALID_ARGUMENT` with the field's issue (`keys.2`, `prefix`,
 * `pageSize`, `bucket`, `client`).
 */
import { z } from "zod";
import { numberWhere, refusedBy } from "../schema/rules.js";
import { rule, says } from "../schema/to-session-error.js";
import { skillKey, skillPrefix } from "./keys.js";

/** A provider's options argument: an object (`text` words the refusal); a missing one breaks `required`. */
export const optionsObject = (text: string) =>
  refusedBy<object>(
    (value) => (typeof value === "object" && value !== null ? undefined : text),
    (value) => (value === undefined ? "required" : "type"),
  );

/** A skill's content: a string. */
export const skillContent = refusedBy<string>(
  (value) => (typeof value === "string" ? undefined : "Skill content must be a string"),
  () => "type",
);

/**
 * The options every bucket skill provider shares. A malformed allow-list entry could never match, so it is a
 * configuration mistake reported when the provider is made.
 */
export const bucketSkillOptions = z.object(
  {
    prefix: skillPrefix.default(""),
    keys: z.array(skillKey, says("keys must be an array of skill keys")).optional(),
  },
  rule("Bucket skill options must be an object", "type"),
);

/** Objects per listing request: none for the store's own (1000), else an integer from 1 to 1000 (the S3 and R2 maximum). */
export const pageSize = numberWhere(
  "pageSize must be an integer from 1 to 1000",
  (n) => Number.isInteger(n) && n >= 1 && n <= 1000,
).optional();

const NO_BUCKET = "S3 skill storage needs a bucket name";
const ONE_CLIENT =
  "S3 skill storage needs exactly one of client (an S3Client) and clientConfig (S3ClientConfig)";
const hasSend = (client: unknown) => typeof (client as { send?: unknown } | undefined)?.send === "function";

/** An S3 source: a bucket name and exactly one of a client (anything with `send`) and a client config. */
export const s3Source = z.preprocess(
  // A source that is not an object names no bucket.
  (value) => (typeof value === "object" && value !== null ? value : {}),
  z
    .looseObject({
      bucket: refusedBy<string>(
        (value) => (typeof value === "string" && value.length > 0 ? undefined : NO_BUCKET),
        (value) => (value === undefined ? "required" : "type"),
      ),
    })
    .check((ctx) => {
      const { client, clientConfig } = ctx.value as { client?: unknown; clientConfig?: unknown };
      const hasClient = hasSend(client);
      if (hasClient !== (clientConfig !== undefined && clientConfig !== null)) return;
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        path: ["client"],
        message: ONE_CLIENT,
        params: { rule: hasClient ? "conflict" : "required" },
      });
    }),
);
