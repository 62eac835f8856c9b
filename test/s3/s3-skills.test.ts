import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HeadObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { MemoryStore, Session } from "../../src/index.js";
import { S3SkillProvider } from "../../src/s3/index.js";
import { type S3Server, startS3Server } from "./server.js";

let server: S3Server;
before(async () => {
  server = await startS3Server();
});
after(async () => {
  await server?.stop();
});

/** The real client behind a `send` that records each command's name, to see which requests a call makes. */
function countingClient(): { client: S3Client; calls: string[] } {
  const calls: string[] = [];
  const client = {
    send: (command: object) => {
      calls.push(command.constructor.name);
      return server.client.send(command as never);
    },
  } as unknown as S3Client;
  return { client, calls };
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

async function storedDescription(key: string): Promise<string | undefined> {
  const head = await server.client.send(new HeadObjectCommand({ Bucket: server.bucket, Key: key }));
  return head.Metadata?.description;
}

describe("S3SkillProvider against s3rver", () => {
  test("get() lists every skill under the prefix, page by page, with descriptions from metadata", async () => {
    for (let i = 0; i < 7; i++)
      await put(`paged/skill-${i}`, `body ${i}`, i % 2 === 0 ? `Skill ${i}` : undefined);
    await put("paged/ops/deploy", "1. Tag", "Deploy checklist");
    await put("paged/dir/", ""); // a console-made folder marker: not a loadable skill
    await put("pagedX/outside", "not under the prefix");
    const { client, calls } = countingClient();
    const provider = new S3SkillProvider({ client, bucket: server.bucket, prefix: "paged/", pageSize: 2 });
    assert.equal(
      await provider.get(),
      [
        "- ops/deploy: Deploy checklist",
        "- skill-0: Skill 0",
        "- skill-1",
        "- skill-2: Skill 2",
        "- skill-3",
        "- skill-4: Skill 4",
        "- skill-5",
        "- skill-6: Skill 6",
      ].join("\n"),
    );
    // 9 objects at 2 per page is 5 listing requests; each skill's metadata needs a HEAD (S3 lists carry none).
    assert.equal(calls.filter((name) => name === "ListObjectsV2Command").length, 5);
    assert.equal(calls.filter((name) => name === "HeadObjectCommand").length, 8);
    assert.equal(await provider.load("ops/deploy"), "1. Tag");
    assert.equal(await provider.load("missing"), null);
    assert.equal(await new S3SkillProvider({ client, bucket: server.bucket, prefix: "empty/" }).get(), null);
  });

  test("set() stores the description as metadata; non-ASCII is RFC 2047 encoded and decoded on read", async () => {
    const provider = new S3SkillProvider({ client: server.client, bucket: server.bucket, prefix: "desc/" });
    await provider.set("greeting", "Grüß Gott!", "Grüße auf Deutsch — 日本語も 🎉");
    await provider.set("style", "Use short sentences.", "House style\nguide");
    await provider.set("bare", "No description");
    await provider.set("empty", "", "   ");
    const stored = await storedDescription("desc/greeting");
    assert.match(stored!, /^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
    assert.equal(await storedDescription("desc/style"), "House style guide");
    assert.equal(await storedDescription("desc/bare"), undefined);
    // Q-encoded words written by another tool decode too.
    await put("desc/other", "x", "=?utf-8?Q?Caf=C3=A9_menu?=");
    assert.equal(
      await provider.get(),
      "- bare\n- empty\n- greeting: Grüße auf Deutsch — 日本語も 🎉\n- other: Café menu\n- style: House style guide",
    );
    assert.equal(await provider.load("greeting"), "Grüß Gott!");
    assert.equal(await provider.load("empty"), "");
    assert.equal(await storedDescription("desc/empty"), undefined);
    // Rewriting a skill replaces its text and description.
    await provider.set("style", "Use active voice.");
    assert.equal(await provider.load("style"), "Use active voice.");
    assert.equal(await storedDescription("desc/style"), undefined);
  });

  test("the allow-list filters get() and load(); refused loads make no request; set() ignores it", async () => {
    await put("allow/code-review", "Review checklist", "Code review");
    await put("allow/debugging", "Debugging steps", "Debugging");
    await put("allow/secret", "Not for this agent");
    const { client, calls } = countingClient();
    const provider = new S3SkillProvider({
      client,
      bucket: server.bucket,
      prefix: "allow/",
      keys: ["code-review", "debugging"],
    });
    assert.equal(await provider.get(), "- code-review: Code review\n- debugging: Debugging");
    // Only allowed keys cost a HEAD.
    assert.equal(calls.filter((name) => name === "HeadObjectCommand").length, 2);
    calls.length = 0;
    assert.equal(await provider.load("secret"), null);
    assert.deepEqual(calls, []);
    assert.equal(await provider.load("debugging"), "Debugging steps");
    await provider.set("new-skill", "Written anyway", "Outside the list");
    assert.equal(await storedDescription("allow/new-skill"), "Outside the list");
    const everything = new S3SkillProvider({ client, bucket: server.bucket, prefix: "allow/", keys: [] });
    assert.equal((await everything.get())?.split("\n").length, 4);
  });

  test("keys that could leave the prefix are refused before any request", async () => {
    const { client, calls } = countingClient();
    const provider = new S3SkillProvider({ client, bucket: server.bucket, prefix: "safe/" });
    const bad = [
      "",
      "../x",
      "a/../../x",
      "./x",
      "a/./b",
      "/etc/passwd",
      "a//b",
      "dir/",
      "..\\x",
      "a\0b",
      "a\nb",
    ];
    for (const key of [...bad, "k".repeat(1100)]) {
      await assert.rejects(provider.load(key), { name: "SessionError", code: "INVALID_ARGUMENT" }, key);
      await assert.rejects(provider.set(key, "x"), { code: "INVALID_ARGUMENT" }, key);
    }
    assert.deepEqual(calls, []);
    assert.throws(() => new S3SkillProvider({ client, bucket: server.bucket, keys: ["ok", "../no"] }), {
      code: "INVALID_ARGUMENT",
    });
  });

  test("options: clientConfig creates (and close() destroys) an owned client; bad options are refused", async () => {
    const provider = new S3SkillProvider({
      clientConfig: server.config,
      bucket: server.bucket,
      prefix: "own/",
    });
    await provider.set("k", "from an owned client");
    assert.equal(await provider.load("k"), "from an owned client");
    await provider.close();
    await provider.close(); // idempotent; the user's own client below is untouched by close()
    const borrowed = new S3SkillProvider({ client: server.client, bucket: server.bucket, prefix: "own/" });
    await borrowed.close();
    assert.equal(await borrowed.load("k"), "from an owned client");
    for (const options of [
      { bucket: server.bucket },
      { client: server.client, clientConfig: server.config, bucket: server.bucket },
      { client: server.client, bucket: "" },
      { client: server.client, bucket: server.bucket, pageSize: 0 },
      { client: server.client, bucket: server.bucket, pageSize: 1001 },
    ]) {
      assert.throws(() => new S3SkillProvider(options as never), { code: "INVALID_ARGUMENT" });
    }
  });

  test("a missing bucket is a storage error, not a missing skill", async () => {
    const provider = new S3SkillProvider({ client: server.client, bucket: "no-such-bucket" });
    await assert.rejects(provider.load("anything"), { name: "StorageError", code: "STORAGE" });
    await assert.rejects(provider.get(), { name: "StorageError", code: "STORAGE" });
  });

  test("Session: [loadable] listing in the prompt, load_context loads, set_context writes with a description", async () => {
    await put("session/api-ref", "# API\nGET /v1", "API Reference documentation");
    const provider = new S3SkillProvider({
      client: server.client,
      bucket: server.bucket,
      prefix: "session/",
    });
    const session = Session.create(new MemoryStore()).withContext("skills", { provider });
    assert.match(
      await session.freezeSystemPrompt(),
      /SKILLS \[loadable\]\n═+\n- api-ref: API Reference documentation$/,
    );
    const tools = await session.tools();
    assert.equal(await tools.load_context!.execute({ label: "skills", key: "api-ref" }), "# API\nGET /v1");
    assert.equal(await tools.load_context!.execute({ label: "skills", key: "nope" }), "Not found: nope");
    assert.match(
      await tools.load_context!.execute({ label: "skills", key: "../x" }),
      /^Error: Invalid skill key "..\/x"/,
    );
    const written = await tools.set_context!.execute({
      label: "skills",
      content: "Talk like a pirate.",
      metadata: { title: "Pirate style", description: "Speak like a pirate ☠" },
    });
    assert.equal(written, 'Indexed "pirate-style" in skills.');
    assert.match((await storedDescription("session/pirate-style"))!, /^=\?UTF-8\?B\?/);
    assert.equal(await provider.load("pirate-style"), "Talk like a pirate.");
    assert.equal(
      session.getContextBlock("skills")?.content,
      "- api-ref: API Reference documentation\n- pirate-style: Speak like a pirate ☠",
    );
  });
});
