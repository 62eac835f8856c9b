import type { S3Client, S3ClientConfig } from "@aws-sdk/client-s3";
import { importOptional } from "../runtime/load.js";
import { parseInput } from "../schema/parse.js";
import { type BucketProviderOptions, BucketSkillProvider, type SkillBucket } from "./core.js";
import { optionsObject, pageSize as pageSizeSchema, s3Source } from "./options-schema.js";

/** The `@aws-sdk/client-s3` module. */
export type S3Module = typeof import("@aws-sdk/client-s3");

/** Where the objects live: a bucket name and either an `S3Client` you own or the config to create one from. */
export type S3BucketSource = { bucket: string } & (
  | { client: S3Client; clientConfig?: never }
  | { clientConfig: S3ClientConfig; client?: never }
);

/** Options of {@link S3SkillProvider}. */
export type S3SkillProviderOptions = S3BucketSource & BucketProviderOptions;

let loading: Promise<S3Module> | undefined;

/** Loads `@aws-sdk/client-s3` on first use (an optional peer); a MissingDependencyError names it when absent. */
export function loadS3Sdk(): Promise<S3Module> {
  // importOptional's variable specifier keeps bundlers (wrangler/esbuild) from resolving the SDK: Workers code that
  // only uses an R2 binding must build without it installed.
  loading ??= importOptional<S3Module>("@aws-sdk/client-s3", "S3 skill storage").catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** True for an S3 "no such object" error; a missing bucket is a configuration error, not a missing skill. */
function isNotFound(error: unknown): boolean {
  const { name, $metadata } = (error ?? {}) as { name?: unknown; $metadata?: { httpStatusCode?: number } };
  if (name === "NoSuchBucket") return false;
  return name === "NoSuchKey" || name === "NotFound" || $metadata?.httpStatusCode === 404;
}

/**
 * A {@link SkillBucket} over the S3 API (AWS S3, Cloudflare R2's S3 endpoint, MinIO). ListObjectsV2 carries no user
 * metadata, so descriptions come from one HEAD per listed skill.
 */
export function s3SkillBucket(source: S3BucketSource, pageSize?: number): SkillBucket {
  parseInput(s3Source, source);
  parseInput(pageSizeSchema, pageSize, { path: "pageSize" });
  const Bucket = source.bucket;
  let connection: Promise<{ sdk: S3Module; client: S3Client; owned: boolean }> | undefined;
  const connect = () => {
    if (!connection) {
      const attempt = loadS3Sdk().then((sdk) =>
        source.client
          ? { sdk, client: source.client, owned: false }
          : { sdk, client: new sdk.S3Client(source.clientConfig), owned: true },
      );
      // A failed load (SDK missing) is retried on the next call rather than remembered.
      attempt.catch(() => {
        if (connection === attempt) connection = undefined;
      });
      connection = attempt;
    }
    return connection;
  };

  return {
    async list(prefix, cursor) {
      const { sdk, client } = await connect();
      const out = await client.send(
        new sdk.ListObjectsV2Command({
          Bucket,
          Prefix: prefix,
          ContinuationToken: cursor,
          MaxKeys: pageSize,
        }),
      );
      return {
        objects: (out.Contents ?? []).flatMap((object) => (object.Key ? [{ key: object.Key }] : [])),
        truncated: out.IsTruncated === true,
        cursor: out.NextContinuationToken,
      };
    },
    async head(key) {
      const { sdk, client } = await connect();
      try {
        return (await client.send(new sdk.HeadObjectCommand({ Bucket, Key: key }))).Metadata ?? {};
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async read(key) {
      const { sdk, client } = await connect();
      try {
        const out = await client.send(new sdk.GetObjectCommand({ Bucket, Key: key }));
        return out.Body ? await out.Body.transformToString("utf-8") : "";
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async write(key, content, metadata) {
      const { sdk, client } = await connect();
      const body = new TextEncoder().encode(content);
      await client.send(
        new sdk.PutObjectCommand({
          Bucket,
          Key: key,
          Body: body,
          // Explicit, because the SDK cannot size an empty body and then warns about "a Stream of unknown length".
          ContentLength: body.byteLength,
          ContentType: "text/markdown; charset=utf-8",
          Metadata: metadata,
        }),
      );
    },
    async close() {
      const current = connection;
      connection = undefined;
      const opened = await current?.catch(() => undefined);
      if (opened?.owned) opened.client.destroy();
    },
  };
}

const s3Options = optionsObject("S3SkillProvider needs options with a bucket and a client");

/**
 * Skills as objects in an S3-compatible bucket (AWS S3, Cloudflare R2 over its S3 API, MinIO), with the reference
 * R2SkillProvider's behaviour: prefix, key allow-list, descriptions from object metadata, paginated listing.
 */
export class S3SkillProvider extends BucketSkillProvider {
  constructor(options: S3SkillProviderOptions) {
    parseInput(s3Options, options, { path: "options" });
    const { prefix, keys, pageSize } = options;
    super(s3SkillBucket(options, pageSize), {
      ...(prefix !== undefined && { prefix }),
      ...(keys !== undefined && { keys }),
    });
  }
}
