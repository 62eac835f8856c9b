import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { FileSystemSkillProvider, MemoryStore, Session } from "../../src/index.js";

const root = mkdtempSync(join(tmpdir(), "agent-session-skills-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const skills = join(root, "skills");
mkdirSync(join(skills, "ops"), { recursive: true });
writeFileSync(
  join(skills, "api-ref.md"),
  "---\ndescription: API Reference documentation\n---\n# API\nGET /v1",
);
writeFileSync(
  join(skills, "ops", "deploy-checklist.md"),
  "---\ntitle: x\ndescription: 'Production deployment checklist'\n---\n1. Tag",
);
writeFileSync(join(skills, "plain.md"), "No front matter here");
writeFileSync(join(skills, "notes.txt"), "not a skill");
writeFileSync(join(root, "secret.md"), "outside the skills directory");
symlinkSync(join(root, "secret.md"), join(skills, "link.md"));

describe("FileSystemSkillProvider", () => {
  test("lists Markdown files by relative key with front-matter descriptions", async () => {
    const provider = new FileSystemSkillProvider(skills);
    assert.equal(
      await provider.get(),
      "- api-ref: API Reference documentation\n- ops/deploy-checklist: Production deployment checklist\n- plain",
    );
    assert.equal(await provider.load("api-ref"), "# API\nGET /v1");
    assert.equal(await provider.load("ops/deploy-checklist"), "1. Tag");
    assert.equal(await provider.load("plain"), "No front matter here");
    assert.equal(await provider.load("missing"), null);
  });

  test("keys that escape the directory are refused, also through a symlink", async () => {
    const provider = new FileSystemSkillProvider(skills);
    for (const key of ["../secret", "ops/../../secret", "/etc/passwd", "..\\secret", "a\0b", ""]) {
      await assert.rejects(provider.load(key), { code: "INVALID_ARGUMENT" }, key);
    }
    await assert.rejects(provider.load("link"), { code: "INVALID_ARGUMENT" });
    await assert.rejects(provider.set("../escape", "x"), { code: "INVALID_ARGUMENT" });
  });

  test("an allow-list limits listing and loading; set writes atomically with a description", async () => {
    const limited = new FileSystemSkillProvider(skills, { keys: ["api-ref"] });
    assert.equal(await limited.get(), "- api-ref: API Reference documentation");
    assert.equal(await limited.load("plain"), null);
    const writable = new FileSystemSkillProvider(join(root, "fresh"));
    assert.equal(await writable.get(), null);
    await writable.set("guides/style", "Use short sentences.", "House style\nguide");
    assert.equal(await writable.get(), "- guides/style: House style guide");
    assert.equal(await writable.load("guides/style"), "Use short sentences.");
  });

  test("through the tools: load returns the document, a bad key is an Error string", async () => {
    const session = Session.create(new MemoryStore()).withContext("skills", {
      provider: new FileSystemSkillProvider(skills),
    });
    assert.match(
      await session.freezeSystemPrompt(),
      /SKILLS \[loadable\]\n═+\n- api-ref: API Reference documentation/,
    );
    const tools = await session.tools();
    assert.equal(await tools.load_context!.execute({ label: "skills", key: "api-ref" }), "# API\nGET /v1");
    assert.match(
      await tools.load_context!.execute({ label: "skills", key: "../secret" }),
      /^Error: Skill key "..\/secret" is outside/,
    );
  });
});
