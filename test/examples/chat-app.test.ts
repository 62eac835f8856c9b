// The chat example end to end: its Hono server in this process, its useChat page in headless Chromium, and the
// stored tree checked through the library and the CLI.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { type ChatApp, startChatApp } from "../../examples/chat-app/server.js";
import { type SessionMessage, SqliteStore } from "../../src/index.js";
import { tempDir } from "../cli/helpers.js";
import { aiAliases } from "../helpers/ai-major-aliases.mjs";
import { chromiumSkip, launchChromium } from "../helpers/chromium.js";

const skip = chromiumSkip("the chat app's browser test");

const textOf = (m: SessionMessage | undefined) =>
  (m?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text ?? ""] : [])).join("");

/** Runs `npm run cli -- args` and returns its output. */
async function npmCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn("npm", ["run", "--silent", "cli", "--", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

describe("the chat example in headless Chromium", { skip }, () => {
  const tmp = tempDir("agent-session-chat-app-");
  const db = tmp.path("chat.db");
  let app: ChatApp;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    // The page on the AI SDK major the tests run on (AGENT_SESSION_AI): @ai-sdk/react 4 with ai@7, 3 with ai@6.
    app = await startChatApp({ db, pageAliases: aiAliases() });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    tmp.remove();
  });

  const texts = () => page.locator('[data-testid="message"] [data-testid="text"]').allTextContents();
  async function settled(count: number): Promise<string[]> {
    await page.waitForFunction(`document.querySelectorAll('[data-testid="message"]').length === ${count} &&
      document.querySelector('[data-testid="status"]')?.textContent === "ready"`);
    return texts();
  }
  async function send(text: string, count: number): Promise<string[]> {
    await page.fill('[data-testid="input"]', text);
    await page.press('[data-testid="input"]', "Enter");
    return settled(count);
  }

  test("send, regenerate, edit, reload: the page and the stored tree agree", async () => {
    await page.goto(`${app.url}?chat=e2e`);
    assert.deepEqual(await send("Hello there", 2), ["Hello there", 'Answer 1: you said "Hello there".']);
    const afterTool = await send("Please remember I like tea", 4);
    assert.equal(afterTool[3], "Noted (answer 3).");
    assert.equal(await page.locator('[data-testid="tool"]').count(), 1, "the memory tool call is shown");

    await page.click('[data-testid="regenerate"]');
    assert.equal((await settled(4))[3], "Noted (answer 5).");

    await page.locator('[data-testid="edit"]').first().click();
    await page.fill('[data-testid="edit-input"]', "Hello again");
    await page.click('[data-testid="save-edit"]');
    assert.deepEqual(await settled(2), ["Hello again", 'Answer 6: you said "Hello again".']);

    await page.reload();
    assert.deepEqual(
      await settled(2),
      ["Hello again", 'Answer 6: you said "Hello again".'],
      "history from the store",
    );
    assert.deepEqual((await send("And now?", 4)).slice(2), ["And now?", 'Answer 7: you said "And now?".']);
    assert.deepEqual(pageErrors, []);

    const store = new SqliteStore(db);
    try {
      const session = store.session("e2e");
      const active = await session.getHistory();
      assert.deepEqual(active.map(textOf), [
        "Hello again",
        'Answer 6: you said "Hello again".',
        "And now?",
        'Answer 7: you said "And now?".',
      ]);
      const original = (await session.searchMessages!("remember tea", 5))[0]!;
      const answers = await session.getBranches(original.id);
      assert.deepEqual(
        answers.map(textOf),
        ["Noted (answer 3).", "Noted (answer 5)."],
        "regenerate: siblings",
      );
      const oldPath = await session.getHistory(answers[1]!.id);
      assert.deepEqual(oldPath.map(textOf).slice(0, 3), [
        "Hello there",
        'Answer 1: you said "Hello there".',
        original.content,
      ]);
      // The edit of the first message is its sibling: both are roots (a path of one), the original keeps its
      // answers, and the edit is stored under the id derived from the one the page kept (docs/AI-SDK.md).
      const [first, edit] = [oldPath[0]!, active[0]!];
      assert.deepEqual((await session.getHistory(first.id)).map(textOf), ["Hello there"]);
      assert.deepEqual((await session.getHistory(edit.id)).map(textOf), ["Hello again"]);
      assert.match(edit.id, new RegExp(`^${first.id}~`));
      assert.deepEqual((await session.getBranches(first.id)).map(textOf), [
        'Answer 1: you said "Hello there".',
      ]);
      assert.deepEqual((await session.getBranches(edit.id)).map(textOf), [
        'Answer 6: you said "Hello again".',
      ]);
      // The answer and its regeneration both ran the memory tool (append): a regenerate re-runs tools too.
      assert.equal(await store.blocks.getBlock("memory_e2e"), "I like tea\nI like tea");
    } finally {
      await store.close();
    }

    const tree = await npmCli(["tree", "e2e", "--db", db]);
    assert.equal(tree.code, 0, tree.stderr);
    // Two roots (the first message and its edit), two answers under the memory request, the active path marked.
    for (const line of [
      /^├─ ○ \S+ user: Hello there$/m,
      /^│ {2}├─ ○ \S+ assistant: Noted \(answer 3\)\. {2}\(leaf\)$/m,
      /^│ {2}└─ ○ \S+ assistant: Noted \(answer 5\)\. {2}\(leaf\)$/m,
      /^└─ ● \S+~\S+ user: Hello again$/m,
      /^ {3}● \S+ user: And now\?$/m,
      /^9 messages, 3 branches, latest leaf \S+$/m,
    ]) {
      assert.match(tree.stdout, line);
    }
  });

  test("a reload in the middle of an answer rejoins it: the whole answer shown once, stored once, no chunk kept", async () => {
    await page.goto(`${app.url}?chat=resume`);
    await settled(0);
    await page.fill('[data-testid="input"]', "Answer slowly please");
    await page.press('[data-testid="input"]', "Enter");
    await page.waitForFunction(
      `(document.querySelectorAll('[data-testid="message"] [data-testid="text"]')[1]?.textContent ?? "").includes("word3")`,
    );
    await page.reload();
    // The page's history came from the store before the answer was stored: the reload was mid-answer.
    assert.equal(
      await page.evaluate("window.CHAT.messages.length"),
      1,
      "the reload came before the answer ended",
    );
    await page.waitForFunction(
      `(document.querySelectorAll('[data-testid="message"] [data-testid="text"]')[1]?.textContent ?? "").endsWith("word40.")`,
    );
    const whole = /^Answer \d+: (word\d+ ){39}word40\.$/;
    const shown = await settled(2);
    assert.equal(shown[0], "Answer slowly please");
    assert.match(shown[1]!, whole, "the whole answer, once");
    assert.deepEqual(pageErrors, []);

    const store = new SqliteStore(db);
    try {
      const stored = await store.session("resume").getHistory();
      assert.deepEqual(stored.map(textOf), shown, "the store holds the answer once");
      // The chunks are dropped a few seconds after the answer ended (lingerMs, for readers still behind).
      for (let i = 0; i < 400 && (await store.streams.countChunks()) > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(await store.streams.countChunks(), 0, "no chunk kept after the answer");
    } finally {
      await store.close();
    }
  });

  test("a late answer: the page shows it whole with a note that it was not kept, no error, the store keeps the newer message", async () => {
    const logged: string[] = [];
    const onWarning = (warning: Error) => logged.push(`warning ${warning.name}: ${warning.message}`);
    const consoleError = console.error;
    console.error = (...args: unknown[]) => logged.push(`console.error ${args.map(String).join(" ")}`);
    process.on("warning", onWarning);
    try {
      await page.goto(`${app.url}?chat=late`);
      await settled(0);
      await page.fill('[data-testid="input"]', "Answer slowly please");
      await page.press('[data-testid="input"]', "Enter");
      await page.waitForFunction(
        `(document.querySelectorAll('[data-testid="message"] [data-testid="text"]')[1]?.textContent ?? "").includes("word3")`,
      );
      // Another tab sends the next message while this page's answer still streams: the store takes it.
      const store = new SqliteStore(db);
      try {
        const [question] = await store.session("late").getHistory();
        const other = await fetch(`${app.url}api/chat`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            id: "late",
            messages: [question, { id: "u2", role: "user", parts: [{ type: "text", text: "Or Friday?" }] }],
            trigger: "submit-message",
          }),
        });
        assert.equal(other.status, 200);
        await other.text();
        await page.waitForSelector('[data-testid="not-kept"]');
        const shown = await settled(2);
        assert.match(shown[1]!, /^Answer \d+: (word\d+ ){39}word40\.$/, "the streamed answer stays whole");
        assert.equal(await page.locator('[data-testid="status"]').textContent(), "ready");
        assert.deepEqual(pageErrors, []);
        const stored = (await store.session("late").getHistory()).map(textOf);
        assert.equal(stored.length, 3, JSON.stringify(stored));
        assert.deepEqual(stored.slice(0, 2), ["Answer slowly please", "Or Friday?"]);
        assert.match(stored[2]!, /you said "Or Friday\?"/, "the newer message's answer, not the late one");
      } finally {
        await store.close();
      }
      await page.reload();
      assert.deepEqual(
        (await settled(3)).slice(0, 2),
        ["Answer slowly please", "Or Friday?"],
        "after a reload",
      );
      assert.deepEqual(logged, [], "nothing logged as a failure");
    } finally {
      process.off("warning", onWarning);
      console.error = consoleError;
    }
  });
});
