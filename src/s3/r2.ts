import { parseInput } from "../schema/parse.js";
import { refusedBy } from "../schema/rules.js";
import { type BucketProviderOptions, BucketSkillProvider, type SkillBucket } from "./core.js";
import { optionsObject, pageSize as pageSizeSchema } from "./options-schema.js";
import { type S3BucketSource, s3SkillBucket } from "./s3.js";

/** The parts of an R2 object the provider reads. */
export interface R2ObjectLike {
  key: string;
  customMetadata?: Record<string, string> | undefined;
}

/** The R2 list options the provider sends. */
export interface R2ListOptionsLike {
  prefix?: string;
  cursor?: string;
  limit?: number;
  include?: ("httpMetadata" | "customMetadata")[];
}

/**
 * The subset of a Workers R2 bucket binding (`env.BUCKET`, type `R2Bucket`) the provider uses, structurally, so this
 * package needs no Workers types; a real binding satisfies it.
 */
export interface R2BucketLike {
  get(key: string): Promise<{ text(): Promise<string> } | null>;
  put(key: string, value: string, options?: { customMetadata?: Record<string, string> }): Promise<unknown>;
  list(options?: R2ListOptionsLike): Promise<{
    objects: readonly R2ObjectLike[];
    truncated: boolean;
    cursor?: string;
  }>;
}

/** Options of {@link R2SkillProvider} (the reference's `{ prefix, keys }`, plus the listing page size). */
export type R2SkillProviderOptions = BucketProviderOptions;

/** True when `value` looks like an R2 bucket binding (has `get`, `put` and `list`). */
export function isR2Bucket(value: unknown): value is R2BucketLike {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ["get", "put", "list"].every((name) => typeof candidate[name] === "function");
}

const r2Binding = refusedBy<R2BucketLike>(
  (value) => (isR2Bucket(value) ? undefined : "Expected an R2 bucket binding with get, put and list"),
  () => "type",
);

const r2Options = optionsObject("R2SkillProvider options must be an object");

/** A {@link SkillBucket} over an R2 bucket binding; custom metadata comes with the listing, so no HEAD requests. */
export function r2SkillBucket(binding: R2BucketLike, pageSize?: number): SkillBucket {
  parseInput(r2Binding, binding, { path: "bucket" });
  parseInput(pageSizeSchema, pageSize, { path: "pageSize" });
  return {
    async list(prefix, cursor) {
      const page = await binding.list({
        prefix,
        // R2 leaves customMetadata out of listings unless it is asked for, and descriptions live there.
        include: ["customMetadata"],
        ...(cursor !== undefined && { cursor }),
        ...(pageSize !== undefined && { limit: pageSize }),
      });
      return {
        objects: page.objects.map((object) => ({ key: object.key, metadata: object.customMetadata })),
        truncated: page.truncated,
        cursor: page.cursor,
      };
    },
    async read(key) {
      const object = await binding.get(key);
      return object ? object.text() : null;
    },
    async write(key, content, metadata) {
      await binding.put(key, content, { customMetadata: metadata });
    },
  };
}

/**
 * The reference `R2SkillProvider(env.BUCKET, { prefix, keys })`: skills as objects in an R2 bucket, given a Workers
 * binding, or, outside Workers, `{ bucket, client | clientConfig }` for R2's S3 API (or any S3-compatible store).
 */
export class R2SkillProvider extends BucketSkillProvider {
  constructor(bucket: R2BucketLike | S3BucketSource, options: R2SkillProviderOptions = {}) {
    parseInput(r2Options, options, { path: "options" });
    const { prefix, keys, pageSize } = options;
    super(isR2Bucket(bucket) ? r2SkillBucket(bucket, pageSize) : s3SkillBucket(bucket, pageSize), {
      ...(prefix !== undefined && { prefix }),
      ...(keys !== undefined && { keys }),
    });
  }
}
