// The viewer on a real AI SDK chat: the chat example's useChat page (mock model) writes a conversation with the
// SDK's 16-character ids, step-start parts and a regenerated answer, in headless Chromium; then `agent-session
// serve` shows it, in a wide window and at 420 px.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { startChatApp } from "../../examples/chat-app/server.js";
import { Session, SqliteStore } from "../../src/index.js";
import { aiAliases } from "../helpers/ai-major-aliases.mjs";
import { chromiumSkip, launchChromium } from "../helpers/chromium.js";
import { type ServeProcess, startServe, tempDir } from "./helpers.js";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));
const CHAT = "weekend-plans";
const skip = chromiumSkip("the viewer's useChat browser test");

/** Chats through the example's useChat page: two turns, then a regenerated answer (a second leaf). */
async function chatThroughUseChat(browser: Browser, db: string): Promise<void> {
  const app = await startChatApp({ db, pageAliases: aiAliases() });
  const page = await browser.newPage();
  try {
    await page.goto(`${app.url}?chat=${CHAT}`);
    const settled = (count: number) =>
      page.waitForFunction(`document.querySelectorAll('[data-testid="message"]').length === ${count} &&
        document.querySelector('[data-testid="status"]')?.textContent === "ready"`);
    for (const [text, count] of [
      ["What should I do this weekend?", 2],
      [
        "And on Sunday? https://example.com/a/very/long/address/that/has/no/place/to/break/at/all/whatsoever",
        4,
      ],
    ] as const) {
      await page.fill('[data-testid="input"]', text);
      await page.press('[data-testid="input"]', "Enter");
      await settled(count);
    }
    await page.click('[data-testid="regenerate"]');
    await settled(4);
  } finally {
    await page.close();
    await app.close();
  }
}

/**
 * The boxes of every element `selector` matches, measured in one evaluation: the page reads its view again when its
 * live stream opens and replaces the conversation's elements, so a box read element by element could meet one that
 * was just removed (the test failed so, now and then).
 */
async function boxesOf(page: Page, selector: string) {
  await page.waitForSelector(selector);
  const boxes = await page.$$eval(selector, (elements) =>
    elements.map((element) => {
      const { x, y, width, height } = element.getBoundingClientRect();
      // No client rects: the element is not rendered (display: none), which a box of zeros would hide.
      return { x, y, width, height, rendered: element.getClientRects().length > 0 };
    }),
  );
  assert.ok(boxes.length > 0, `${selector} matches`);
  for (const box of boxes) assert.ok(box.rendered, `${selector} is displayed`);
  return boxes;
}

describe("viewer on a useChat chat in headless Chromium", { skip }, () => {
  const tmp = tempDir();
  const db = tmp.path("usechat.db");
  let server: ServeProcess;
  let browser: Browser;
  const pageErrors: string[] = [];

  before(async () => {
    browser = await launchChromium();
    await chatThroughUseChat(browser, db);
    const plain = Session.create(db); // no forSession: the default session, id ""
    await plain.appendMessage({ id: "d1", role: "user", parts: [{ type: "text", text: "hello" }] });
    await plain.close();
    server = await startServe(db);
  });

  after(async () => {
    await browser?.close();
    const code = await server?.stop();
    tmp.remove();
    assert.equal(code, 0, "serve exits cleanly on SIGTERM");
  });

  async function open(width: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}#session=${CHAT}`);
    await page.waitForSelector("#conversation .msg.assistant");
    return page;
  }

  test("readable end-of-branch labels, no raw step-start, times of an unregistered session, a legend", async () => {
    const page = await open(1400);
    const leaves = page.locator("#graph [data-leaf]");
    assert.equal(await leaves.count(), 2, "the regenerated answer is a second leaf");
    for (const leaf of await leaves.all()) {
      const id = (await leaf.getAttribute("data-node-id")) ?? "";
      assert.equal(id.length, 16, "AI SDK ids");
      assert.equal(await leaf.locator("text").textContent(), `${id.slice(0, 11)}…`);
    }
    const boxes = await boxesOf(page, "#graph text");
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const apart =
          a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        assert.ok(apart, `labels overlap: ${JSON.stringify([a, b])}`);
      }
    }
    const conversation = (await page.textContent("#conversation")) ?? "";
    assert.match(conversation, /Answer \d+: you said/);
    assert.doesNotMatch(conversation, /step-start/);
    const summary = (await page.textContent("#summary")) ?? "";
    assert.match(summary, /created \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(first message\)/);
    assert.match(summary, /last activity \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(last message\)/);
    assert.match((await page.textContent("#legend")) ?? "", /user.*assistant.*hollow.*dashed.*ringed/s);
    assert.match((await page.textContent('#sessions [data-session-id=""]')) ?? "", /^\(default session\)/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "viewer-usechat.png") });
    await page.close();
  });

  test("at 420 px wide nothing runs off screen: the search box and the messages fit", async () => {
    const page = await open(420);
    assert.ok(
      (await page.evaluate<number>("document.documentElement.scrollWidth")) <= 420,
      "no sideways scroll",
    );
    for (const selector of ["#q", '#search button[type="submit"]', "#conversation .msg"]) {
      for (const box of await boxesOf(page, selector)) {
        assert.ok(box.x >= 0 && box.x + box.width <= 420, `${selector} fits: ${box.x} + ${box.width}`);
      }
    }
    await page.screenshot({ path: join(ARTIFACTS, "viewer-usechat-420.png"), fullPage: true });
    await page.close();
  });

  test("the sidebar's message count follows a live write", async () => {
    const page = await open(1400);
    const count = page.locator(`#sessions [data-session-id="${CHAT}"]`);
    const before = Number(/(\d+) messages/.exec((await count.textContent()) ?? "")?.[1]);
    const writer = new SqliteStore(db);
    try {
      await Session.create(writer)
        .forSession(CHAT)
        .appendMessage({ id: "live-1", role: "user", parts: [{ type: "text", text: "one more" }] });
      await page.waitForSelector('#conversation [data-message-id="live-1"]', { timeout: 10_000 });
      await page.waitForFunction(
        `document.querySelector('#sessions [data-session-id="${CHAT}"]')?.textContent.includes("${before + 1} messages")`,
        undefined,
        { timeout: 10_000 },
      );
    } finally {
      await writer.close();
      await page.close();
    }
    assert.deepEqual(pageErrors, []);
  });
});
