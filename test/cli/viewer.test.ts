// The web viewer end to end: `agent-session serve` in a child process, driven by real headless Chromium.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { SqliteStore } from "../../src/sqlite/store.js";
import { chromiumSkip, launchChromium } from "../helpers/chromium.js";
import { runCli, type ServeProcess, startServe, tempDir } from "./helpers.js";

const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));

const skip = chromiumSkip("the viewer's browser test");

describe("viewer in headless Chromium", { skip }, () => {
  const tmp = tempDir();
  const db = tmp.path("viewer.db");
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    const demo = await runCli(["demo", "--db", db]);
    assert.equal(demo.code, 0, demo.stderr);
    // A fact of demo-deploy's own, drawn from a3 on the branch the conversation left, holding markup.
    const store = new SqliteStore(db);
    await store.facts.add({ sessionId: "demo-deploy" }, [
      {
        id: "f-friday",
        text: "Friday works <script>alert('fact')</script> if the backfill finishes.",
        about: "the deploy",
        observedAt: Date.UTC(2025, 10, 21),
        producer: "function:test",
        sources: [{ sessionId: "demo-deploy", messageId: "a3" }],
      },
    ]);
    await store.close();
    server = await startServe(db);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    const code = await server?.stop();
    tmp.remove();
    assert.equal(code, 0, "serve exits cleanly on SIGTERM");
  });

  test("clicking a leaf shows that branch, with the overlay expandable to the original messages", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    await page.goto(server.url);
    await page.click('#sessions [data-session-id="demo-deploy"]');
    await page.waitForSelector('#conversation [data-message-id="a4"]');
    assert.match(
      (await page.textContent("#summary")) ?? "",
      /4210 in \/ 612 out, cache 3100 read \/ 800 write, \$0\.0218/,
    );
    assert.equal(await page.locator("#graph [data-leaf]").count(), 3, "three leaves drawn");

    // The original answer a3 sits on an abandoned branch; clicking it reads that branch instead.
    await page.click('#graph [data-node-id="a3"]');
    await page.waitForSelector('#conversation [data-message-id="a3"]');
    const conversation = page.locator("#conversation");
    assert.match(
      (await conversation.textContent()) ?? "",
      /Friday afternoon works if the backfill finishes by noon/,
    );
    assert.doesNotMatch((await conversation.textContent()) ?? "", /Thursday it is/);
    assert.match((await page.textContent("#branch-title")) ?? "", /^Branch to a3 · 3 messages/);
    assert.match((await page.getAttribute('#graph [data-node-id="a3"]', "class")) ?? "", /selected/);
    assert.match(page.url(), /#session=demo-deploy&leaf=a3$/);

    const overlay = page.locator("#conversation .msg.overlay");
    assert.equal(await overlay.count(), 1);
    assert.match((await overlay.textContent()) ?? "", /Replaces 4 messages: u1 … a2/);
    const original = overlay.locator('[data-message-id="u2"]');
    assert.equal(await original.isVisible(), false, "originals start collapsed");
    await overlay.locator("summary").click();
    assert.equal(await original.isVisible(), true);
    assert.match((await original.textContent()) ?? "", /Staging took 40 minutes/);

    assert.match((await page.textContent("#blocks")) ?? "", /Deploys happen on Thursdays/);
    assert.match((await page.textContent("#blocks .prompt")) ?? "", /SOUL \[readonly\]/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "viewer-branch.png"), fullPage: true });
  });

  test("stored markup is shown as text, never run", async () => {
    await page.click('#sessions [data-session-id="demo-trip"]');
    const message = page.locator('#conversation [data-message-id="t5"]');
    await message.waitFor();
    assert.match((await message.textContent()) ?? "", /<script>alert\('hi'\)<\/script> <b>bold\?<\/b>/);
    assert.equal(await page.locator("#conversation script, #conversation b").count(), 0);
    assert.deepEqual(dialogs, []);
  });

  test("the facts panel shows a fact as text, and its source opens the branch with the message marked", async () => {
    await page.click('#sessions [data-session-id="demo-deploy"]');
    const item = page.locator('#facts [data-fact-id="f-friday"]');
    await item.waitFor();
    assert.match(
      (await item.textContent()) ?? "",
      /^current · about the deploy · observed 2025-11-21 00:00:00/,
    );
    assert.match(
      (await item.textContent()) ?? "",
      /Friday works <script>alert\('fact'\)<\/script> if the backfill/,
    );
    assert.equal(await page.locator("#facts script").count(), 0);
    await page.waitForSelector('#conversation [data-message-id="a4"]');
    await item.locator('button[data-source="a3"]').click();
    await page.waitForSelector('#conversation .msg.target[data-message-id="a3"]');
    assert.match((await page.textContent("#branch-title")) ?? "", /^Branch to a3/);
    assert.deepEqual(dialogs, []);
  });

  test("the search box finds messages on other branches and opens them", async () => {
    await page.fill("#q", "support team");
    await page.click('#search button[type="submit"]');
    const hit = page.locator('#results [data-hit-id="u4e"]');
    await hit.waitFor();
    assert.match((await hit.textContent()) ?? "", /demo-deploy · u4e · user · other branch/);
    await hit.click();
    await page.waitForSelector('#conversation [data-message-id="u4e"]');
    assert.match((await page.textContent("#branch-title")) ?? "", /^Branch to u4e/);
    assert.deepEqual(pageErrors, []);
  });

  test("the server is read-only and answers only local host names", async () => {
    const post = await fetch(`${server.url}api/sessions`, { method: "POST" });
    assert.equal(post.status, 405);
    const own = { headers: { "X-Agent-Session-Viewer": "1" } };
    assert.equal((await fetch(`${server.url}api/sessions`)).status, 403, "no same-origin signal");
    const sessions = await fetch(`${server.url}api/sessions`, own);
    assert.equal(sessions.status, 200);
    const missing = await fetch(`${server.url}api/session?id=nope`, own);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: { message: string } }).error.message, /not found/);
    const html = await fetch(server.url);
    assert.match(html.headers.get("content-security-policy") ?? "", /script-src 'nonce-/);
    // DNS rebinding: a foreign Host header is refused even though the connection is local.
    const { request } = await import("node:http");
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const headers = { Host: "attacker.example", ...own.headers };
      const req = request(`${server.url}api/sessions`, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 403);
  });
});
