// The chat route the README and docs/AI-SDK.md show, run as written: its code block is taken from the file, the
// package names pointed at this checkout, `model` a mock, the database a temporary file; nothing else changes.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { LanguageModel } from "ai";
import { Session, SqliteStore } from "../../src/index.js";
import { scriptedModel } from "../agent/helpers/mock-model.js";
import { chatRoute, NodeChat, textOf } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-doc-route-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const src = (path: string) => pathToFileURL(join(import.meta.dirname, "../../src", path)).href;

/** The first ```ts block after `heading` in `file` (relative to the repository root). */
function codeBlock(file: string, heading: string): string {
  const text = readFileSync(join(import.meta.dirname, "../..", file), "utf8");
  const start = text.indexOf(heading);
  assert.ok(start >= 0, `${file} has "${heading}"`);
  const block = /```ts\n([\s\S]*?)```/.exec(text.slice(start));
  assert.ok(block, `${file} has a ts block after "${heading}"`);
  return block[1]!;
}

for (const [file, heading] of [
  ["README.md", "## Chat apps with the AI SDK"],
  ["docs/AI-SDK.md", "# Chat apps with the AI SDK"],
]) {
  test(`${file}: the chat route runs as written (send, regenerate, edit)`, async () => {
    const code = codeBlock(file!, heading!);
    assert.ok(code.trim().split("\n").length <= 13, `a complete route in about 10 lines:\n${code}`);
    const db = join(dir, `${file!.replace(/\W/g, "_")}.db`);
    // .mts: a .ts file outside this "type": "module" package would load as CommonJS, a second copy of the library.
    const module = join(dir, `${file!.replace(/\W/g, "_")}.route.mts`);
    const source = code
      .replace('from "ai"', `from ${JSON.stringify(import.meta.resolve("ai"))}`)
      .replace('from "agent-session/ai"', `from ${JSON.stringify(src("ai-sdk/index.js"))}`)
      .replace('from "agent-session"', `from ${JSON.stringify(src("index.js"))}`)
      .replace('"./chat.db"', JSON.stringify(db));
    assert.doesNotMatch(source, /from "agent-session|"\.\/chat\.db"/, "every substitution applied");
    const globals = globalThis as { docRouteModel?: unknown };
    globals.docRouteModel = scriptedModel((i) => ({ text: `answer ${i}` }));
    writeFileSync(module, `const model = (globalThis as any).docRouteModel;\n${source}\nexport { store };\n`);
    const route = (await import(pathToFileURL(module).href)) as {
      POST: (req: Request) => Promise<Response>;
      store: SqliteStore;
    };
    assert.ok(route.store instanceof SqliteStore, "the block opens its store, once per process");
    try {
      const chat = new NodeChat("doc", route.POST);
      await chat.sendMessage({ text: "first" });
      await chat.sendMessage({ text: "second" });
      const [, a1, u2] = chat.messages.map((m) => m.id);
      await chat.regenerate();
      await chat.sendMessage({ text: "second, edited", messageId: u2! });
      const session = Session.create(route.store).forSession("doc");
      assert.deepEqual(
        (await session.getBranches(u2!)).map(textOf),
        ["answer 1", "answer 2"],
        "regenerate: siblings",
      );
      assert.deepEqual(
        (await session.getBranches(a1!)).map(textOf),
        ["second", "second, edited"],
        "edit: siblings",
      );
      assert.deepEqual((await session.getHistory()).map(textOf), [
        "first",
        "answer 0",
        "second, edited",
        "answer 3",
      ]);
    } finally {
      await route.store.close();
    }
  });
}

test("docs/AI-SDK.md: the mock model of a first test streams its reply into the stored answer", async () => {
  const code = codeBlock("docs/AI-SDK.md", "## Testing a chat route without a model");
  const module = join(dir, "mock-model.mts");
  const source = code
    .replace('from "ai/test"', `from ${JSON.stringify(import.meta.resolve("ai/test"))}`)
    .replace('from "ai"', `from ${JSON.stringify(import.meta.resolve("ai"))}`);
  writeFileSync(module, source);
  const { mockModel } = (await import(pathToFileURL(module).href)) as {
    mockModel: (reply: string) => LanguageModel;
  };
  const store = new SqliteStore(join(dir, "mock-model.db"));
  try {
    const chat = new NodeChat("first-test", chatRoute(store, mockModel("Hi! How can I help?")));
    await chat.sendMessage({ text: "Hello" });
    const history = await Session.create(store).forSession("first-test").getHistory();
    assert.deepEqual(history.map(textOf), ["Hello", "Hi! How can I help?"]);
  } finally {
    await store.close();
  }
});
