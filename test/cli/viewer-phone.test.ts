// The web viewer on a phone-wide screen (420 px) and as a link to share: `agent-session serve` in a child process,
// driven by real headless Chromium. The search box stays usable, the end of the branch shown is on screen, a search
// shows each turn once and lives in the address, and agent sessions and plain conversations read cleanly.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { SQLiteSessionStorage } from "../../src/agent/storage/sqlite.js";
import type { AgentMessage } from "../../src/agent/types.js";
import { Session } from "../../src/session/session.js";
import { chromiumSkip, launchChromium } from "../helpers/chromium.js";
import { runCli, type ServeProcess, startServe, tempDir } from "./helpers.js";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));
const WIDTH = 420;
const skip = chromiumSkip("the viewer's phone-width test");

/** A session whose eight answers to one question are eight branches: its tree is far wider than a phone. */
async function writeWideSession(db: string): Promise<void> {
  const session = Session.create(db).forSession("offsite");
  try {
    await session.appendMessage({ id: "q", role: "user", parts: [{ type: "text", text: "Which city?" }] });
    for (let i = 0; i < 8; i++) {
      const answer = { type: "text" as const, text: `Option ${i}` };
      await session.appendMessage({ id: `answer-option-${i}`, role: "assistant", parts: [answer] }, "q");
    }
  } finally {
    await session.close();
  }
}

/** An agent session without a title: the registry names it by its id, and its header is an `_agent_state` row. */
async function writeAgentSession(db: string): Promise<void> {
  const storage = new SQLiteSessionStorage(db);
  const at = Date.parse("2025-01-02T03:04:05Z");
  const message = (id: string, role: "user" | "assistant", content: string) =>
    ({ id, role, content, createdAt: at }) as AgentMessage;
  try {
    await storage.save({
      id: "agent-run-7",
      messages: [message("g1", "user", "Summarise the notes"), message("g2", "assistant", "Done.")],
      usage: {
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        totalTokens: 0,
        steps: 0,
        compactions: 0,
        entries: [],
      },
      metadata: {},
      createdAt: at,
      updatedAt: at,
    });
  } finally {
    await storage.close();
  }
}

describe("viewer at 420 px in headless Chromium", { skip }, () => {
  const tmp = tempDir();
  const db = tmp.path("phone.db");
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    const demo = await runCli(["demo", "--db", db]);
    assert.equal(demo.code, 0, demo.stderr);
    await writeWideSession(db);
    await writeAgentSession(db);
    server = await startServe(db);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    const code = await server?.stop();
    tmp.remove();
    assert.equal(code, 0, "serve exits cleanly on SIGTERM");
  });

  test("the search box is usable and the page is no wider than the screen", async () => {
    await page.goto(server.url);
    await page.waitForSelector('#sessions [data-session-id="offsite"]');
    const box = await page.locator("#q").boundingBox();
    assert.ok(box && box.width >= 0.6 * WIDTH, `search box ${box?.width} px wide`);
    assert.ok(box.x >= 0 && box.x + box.width <= WIDTH);
    const scrollWidth = await page.$eval("html", (html) => html.scrollWidth);
    assert.ok(scrollWidth <= WIDTH, `page ${scrollWidth} px wide`);
  });

  test("the end of the branch shown is on screen, also after picking a branch", async () => {
    await page.click('#sessions [data-session-id="offsite"]');
    await page.waitForSelector('#conversation [data-message-id="answer-option-7"]');
    const onScreen = async (id: string) => {
      const node = await page.locator(`#graph [data-node-id="${id}"]`).boundingBox();
      const graph = await page.locator("#graph").boundingBox();
      assert.ok(node && graph, id);
      assert.ok(
        node.x >= graph.x && node.x + node.width <= graph.x + graph.width,
        `${id} inside the graph box`,
      );
      assert.ok(node.x + node.width <= WIDTH, `${id} ends at ${node.x + node.width} px`);
    };
    const tree = await page.locator("#graph svg").boundingBox();
    assert.ok(tree && tree.width > WIDTH, "the tree is wider than the screen");
    await onScreen("answer-option-7");
    await page.screenshot({ path: join(ARTIFACTS, "viewer-phone-graph.png") });
    // A click redraws the graph: the branch picked stays in view rather than the scroll jumping back to 0. (The dot
    // is clicked: the middle of a node with a long label is the label, which lets clicks through.)
    await page.click('#graph [data-node-id="answer-option-6"] circle');
    await page.waitForSelector('#conversation [data-message-id="answer-option-6"]');
    await onScreen("answer-option-6");
  });

  test("a search with context shows each turn once, lives in the address and comes back on reload", async () => {
    await page.fill("#q", "deploy");
    await page.selectOption("#context", "2");
    await page.click('#search button[type="submit"]');
    await page.waitForSelector("#results .hit");
    const shown = () =>
      page.$$eval("#results [data-hit-id], #results [data-context-id]", (nodes) =>
        nodes.map((n) => n.getAttribute("data-hit-id") ?? n.getAttribute("data-context-id")),
      );
    const ids = await shown();
    assert.deepEqual(ids, [...new Set(ids)], "no turn shown twice");
    const heading = (await page.textContent("#results h3")) ?? "";
    assert.equal(`${await page.locator("#results .hit").count()} matches`, heading, "every hit shown");
    assert.match(page.url(), /#session=offsite&leaf=answer-option-6&q=deploy&context=2$/);
    await page.screenshot({ path: join(ARTIFACTS, "viewer-phone-search.png"), fullPage: true });

    await page.reload();
    await page.waitForSelector("#results .hit");
    assert.equal(await page.inputValue("#q"), "deploy");
    assert.equal(await page.inputValue("#context"), "2");
    assert.deepEqual(await shown(), ids);
    await page.waitForSelector('#conversation [data-message-id="answer-option-6"]');
    // Opening a hit leaves the results, and the address drops the search with them.
    await page.click('#results [data-hit-id="u3"]');
    await page.waitForSelector('#conversation [data-message-id="u3"]');
    assert.match(page.url(), /#session=demo-deploy&leaf=u3$/);
  });

  test("a link's search value the form lacks is searched as given, and a bad one is the API's error", async () => {
    await page.goto("about:blank"); // from the viewer's own address a new hash alone would not load the page
    await page.goto(`${server.url}#q=deploy&context=abc`);
    await page.waitForSelector("#results .error");
    assert.match((await page.textContent("#results")) ?? "", /"context" parameter must be a whole number/);
    assert.equal(await page.inputValue("#context"), "abc");
  });

  test("an agent session shows its id once and its header apart; plain sessions wear no badge", async () => {
    await page.goto("about:blank");
    await page.goto(server.url);
    const entry = page.locator('#sessions [data-session-id="agent-run-7"]');
    await entry.waitFor();
    assert.equal(((await entry.textContent()) ?? "").split("agent-run-7").length - 1, 1);
    assert.doesNotMatch((await page.textContent("#sessions")) ?? "", /unregistered/);
    await entry.click();
    await page.waitForSelector('#conversation [data-message-id="g2"]');
    assert.equal(((await page.textContent("#summary")) ?? "").split("agent-run-7").length - 1, 1);
    await page.waitForSelector("#blocks .internal-state");
    const blocks = page.locator("#blocks");
    assert.match((await blocks.textContent()) ?? "", /^Context blocksNo stored blocks\./);
    assert.match((await page.textContent("#blocks .internal-state")) ?? "", /_agent_state_agent-run-7/);
    await page.screenshot({ path: join(ARTIFACTS, "viewer-phone-agent.png"), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
