import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { MemoryStore, Session } from "../../src/index.js";
import {
  type R2BucketLike,
  type R2ListOptionsLike,
  R2SkillProvider,
  S3SkillProvider,
} from "../../src/s3/index.js";
import { type S3Server, startS3Server } from "./server.js";

let server: S3Server;
before(async () => {
  server = await startS3Server();
});
after(async () => {
  await server?.stop();
});

interface Call {
  method: "get" | "put" | "list";
  key?: string;
  options?: unknown;
}

/**
 * An R2 bucket binding implemented over the S3 API of the running s3rver: what `env.BUCKET` does on Workers, with
 * R2's listing rule that custom metadata is only included when `include: ["customMetadata"]` asks for it.
 */
function s3BackedBinding(client: S3Client, Bucket: string): { binding: R2BucketLike; calls: Call[] } {
  const calls: Call[] = [];
  const binding = {
    async get(key: string) {
      calls.push({ method: "get", key });
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        const text = (await out.Body?.transformToString("utf-8")) ?? "";
        return { key, customMetadata: out.Metadata ?? {}, text: async () => text };
      } catch (error) {
        if ((error as { name?: string }).name === "NoSuchKey") return null;
        throw error;
      }
    },
    async put(key: string, value: string, options?: { customMetadata?: Record<string, string> }) {
      calls.push({ method: "put", key, options });
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: value,
          ContentLength: Buffer.byteLength(value),
          Metadata: options?.customMetadata ?? {},
        }),
      );
      return { key };
    },
    async list(options: R2ListOptionsLike = {}) {
      calls.push({ method: "list", options });
      const out = await client.send(
        new ListObjectsV2Command({
          Bucket,
          Prefix: options.prefix,
          ContinuationToken: options.cursor,
          MaxKeys: options.limit,
        }),
      );
      const withMetadata = options.include?.includes("customMetadata") === true;
      const objects = await Promise.all(
        (out.Contents ?? []).map(async ({ Key }) => {
          if (!withMetadata) return { key: Key! };
          const head = await client.send(new HeadObjectCommand({ Bucket, Key }));
          return { key: Key!, customMetadata: head.Metadata ?? {} };
        }),
      );
      return out.IsTruncated
        ? { objects, truncated: true as const, cursor: out.NextContinuationToken! }
        : { objects, truncated: false as const };
    },
  };
  return { binding, calls };
}

async function put(key: string, body: string, description?: string): Promise<void> {
  await server.client.send(
    new PutObjectCommand({
      Bucket: server.bucket,
      Key: key,
      Body: body,
      ContentLength: Buffer.byteLength(body),
      ...(description !== undefined && { Metadata: { description } }),
    }),
  );
}

describe("R2SkillProvider", () => {
  test("over a binding: paginated listing asks R2 for custom metadata and follows the cursor", async () => {
    for (const name of ["a", "b", "c", "d", "e"])
      await put(`r2/skills/${name}`, `skill ${name}`, `About ${name}`);
    await put("r2/skills/plain", "no description");
    const { binding, calls } = s3BackedBinding(server.client, server.bucket);
    const provider = new R2SkillProvider(binding, { prefix: "r2/skills/", pageSize: 2 });
    assert.equal(
      await provider.get(),
      "- a: About a\n- b: About b\n- c: About c\n- d: About d\n- e: About e\n- plain",
    );
    const lists = calls
      .filter((call) => call.method === "list")
      .map((call) => call.options as R2ListOptionsLike);
    assert.equal(lists.length, 3);
    for (const options of lists) {
      assert.deepEqual(options.include, ["customMetadata"]);
      assert.equal(options.prefix, "r2/skills/");
      assert.equal(options.limit, 2);
    }
    assert.equal(lists[0]!.cursor, undefined);
    assert.ok(lists[1]!.cursor && lists[2]!.cursor && lists[1]!.cursor !== lists[2]!.cursor);
    assert.equal(await provider.load("c"), "skill c");
    assert.equal(await provider.load("missing"), null);
  });

  test("allow-list relative to the prefix; disallowed keys are never fetched; set ignores the list", async () => {
    await put("r2/allow/code-review", "Review", "Code review");
    await put("r2/allow/debugging", "Debug");
    await put("r2/allow/private", "Hidden");
    const { binding, calls } = s3BackedBinding(server.client, server.bucket);
    const provider = new R2SkillProvider(binding, {
      prefix: "r2/allow/",
      keys: ["code-review", "debugging"],
    });
    assert.equal(await provider.get(), "- code-review: Code review\n- debugging");
    assert.equal(await provider.load("private"), null);
    assert.equal(await provider.load("r2/allow/code-review"), null, "keys are relative to the prefix");
    assert.deepEqual(
      calls.filter((call) => call.method === "get"),
      [],
    );
    assert.equal(await provider.load("code-review"), "Review");
    await provider.set("brand-new", "Fresh", "Añadido — fuera de la lista");
    const put_ = calls.find((call) => call.method === "put")!;
    assert.equal(put_.key, "r2/allow/brand-new");
    // Custom metadata stays ASCII-safe so the object reads the same through R2's S3 API.
    assert.match(
      (put_.options as { customMetadata: { description: string } }).customMetadata.description,
      /^=\?UTF-8\?B\?/,
    );
    for (const keys of [undefined, []]) {
      const all = new R2SkillProvider(binding, { prefix: "r2/allow/", ...(keys && { keys }) });
      assert.equal(
        await all.get(),
        "- brand-new: Añadido — fuera de la lista\n- code-review: Code review\n- debugging\n- private",
      );
    }
    await assert.rejects(provider.load("../escape"), { code: "INVALID_ARGUMENT" });
  });

  test("over an S3 client: the same bucket reads the same as through the binding", async () => {
    const { binding } = s3BackedBinding(server.client, server.bucket);
    await new R2SkillProvider(binding, { prefix: "r2/shared/" }).set("tips", "Be brief.", "Tipps für Kürze");
    const viaS3 = new R2SkillProvider(
      { client: server.client, bucket: server.bucket },
      { prefix: "r2/shared/" },
    );
    assert.equal(await viaS3.get(), "- tips: Tipps für Kürze");
    assert.equal(await viaS3.load("tips"), "Be brief.");
    const viaS3Provider = new S3SkillProvider({
      client: server.client,
      bucket: server.bucket,
      prefix: "r2/shared/",
    });
    assert.equal(await viaS3Provider.get(), "- tips: Tipps für Kürze");
    assert.throws(() => new R2SkillProvider({} as never), { code: "INVALID_ARGUMENT" });
    assert.throws(() => new R2SkillProvider(binding, { prefix: "a\nb" }), { code: "INVALID_ARGUMENT" });
  });

  test("in a Session, the reference's `new R2SkillProvider(env.BUCKET, { prefix })` works unchanged", async () => {
    await put("r2/session/api-ref", "# API", "API Reference documentation");
    const env = { SKILLS_BUCKET: s3BackedBinding(server.client, server.bucket).binding };
    const session = Session.create(new MemoryStore()).withContext("skills", {
      provider: new R2SkillProvider(env.SKILLS_BUCKET, { prefix: "r2/session/" }),
    });
    assert.match(
      await session.freezeSystemPrompt(),
      /SKILLS \[loadable\]\n═+\n- api-ref: API Reference documentation$/,
    );
    const tools = await session.tools();
    assert.equal(await tools.load_context!.execute({ label: "skills", key: "api-ref" }), "# API");
  });
});

// Compile-time check: a binding typed like @cloudflare/workers-types' R2Bucket (its overloads, abridged) is accepted.
declare abstract class WorkersR2Object {
  readonly key: string;
  readonly size: number;
  readonly customMetadata?: Record<string, string>;
}
declare abstract class WorkersR2ObjectBody extends WorkersR2Object {
  text(): Promise<string>;
}
declare abstract class WorkersR2Bucket {
  get(key: string, options: { onlyIf: object }): Promise<WorkersR2ObjectBody | WorkersR2Object | null>;
  get(key: string, options?: { range?: object }): Promise<WorkersR2ObjectBody | null>;
  put(
    key: string,
    value: ReadableStream | ArrayBuffer | ArrayBufferView | string | null | Blob,
    options?: { customMetadata?: Record<string, string> } & { onlyIf: object },
  ): Promise<WorkersR2Object | null>;
  put(
    key: string,
    value: ReadableStream | ArrayBuffer | ArrayBufferView | string | null | Blob,
    options?: { customMetadata?: Record<string, string>; httpMetadata?: object },
  ): Promise<WorkersR2Object>;
  list(
    options?: R2ListOptionsLike & { delimiter?: string; startAfter?: string },
  ): Promise<
    { objects: WorkersR2Object[]; delimitedPrefixes: string[] } & (
      | { truncated: true; cursor: string }
      | { truncated: false }
    )
  >;
  delete(keys: string | string[]): Promise<void>;
}
const typedLikeWorkers = (env: { SKILLS_BUCKET: WorkersR2Bucket }) =>
  new R2SkillProvider(env.SKILLS_BUCKET, { prefix: "skills/", keys: ["code-review"] });
// Used, not exported: Biome's test rules (on since vitest is a dev dependency) forbid exports from a test file.
test("a binding typed like Workers' R2Bucket type-checks", () =>
  assert.equal(typeof typedLikeWorkers, "function"));
