// The viewer follows an open session live: another process writes to the database, the page shows the new
// messages through server-sent events (`agent-session serve` in a child process, real headless Chromium).
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { SqliteStore } from "../../src/sqlite/store.js";
import { chromiumSkip, launchChromium } from "../helpers/chromium.js";
import { runCli, type ServeProcess, startServe, tempDir } from "./helpers.js";

const skip = chromiumSkip("the viewer's live-update test");

describe("viewer: live updates in headless Chromium", { skip }, () => {
  const tmp = tempDir();
  const db = tmp.path("live.db");
  let server: ServeProcess;
  let browser: Browser;
  let page: Page;
  let writer: SqliteStore;
  const pageErrors: string[] = [];

  before(async () => {
    const demo = await runCli(["demo", "--db", db]);
    assert.equal(demo.code, 0, demo.stderr);
    server = await startServe(db);
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    // Another process as far as the server is concerned: its own connection, with the change log on.
    writer = new SqliteStore(db, { changeLog: true });
  });

  after(async () => {
    await writer?.close();
    await browser?.close();
    const code = await server?.stop();
    tmp.remove();
    assert.equal(code, 0, "serve exits cleanly on SIGTERM");
  });

  test("a writer without a change log is followed too, and watching created no table", async () => {
    await page.goto(server.url);
    await page.click('#sessions [data-session-id="demo-deploy"]');
    await page.waitForSelector('#conversation [data-message-id="a4"]');
    // An ordinary app: it never heard of `changeLog`; the server sees the file's data version move.
    const plain = new SqliteStore(db);
    try {
      await plain.session("demo-deploy").appendMessage({
        id: "plain-1",
        role: "user",
        parts: [{ type: "text", text: "Written plainly." }],
      });
      await page.waitForSelector('#conversation [data-message-id="plain-1"]', { timeout: 10_000 });
      assert.match((await page.textContent("#branch-title")) ?? "", /^Branch to plain-1/);
      const tables = plain.driver.all("SELECT name FROM sqlite_master WHERE name = 'agent_changes'");
      assert.deepEqual(tables, [], "serve (watch mode) did not create the change log table");
    } finally {
      await plain.close();
    }
  });

  test("an open session shows messages as they are appended, updated and deleted", async () => {
    await page.goto(server.url);
    await page.click('#sessions [data-session-id="demo-deploy"]');
    await page.waitForSelector('#conversation [data-message-id="a4"]');
    const session = writer.session("demo-deploy");
    await session.appendMessage({
      id: "live-1",
      role: "user",
      parts: [{ type: "text", text: "Are we still on?" }],
    });
    const added = page.locator('#conversation [data-message-id="live-1"]');
    await added.waitFor({ timeout: 10_000 });
    assert.match((await added.textContent()) ?? "", /Are we still on\?/);
    await session.appendMessage({
      id: "live-2",
      role: "assistant",
      parts: [{ type: "text", text: "Yes, Thursday." }],
    });
    await page.waitForSelector('#conversation [data-message-id="live-2"]', { timeout: 10_000 });
    assert.match((await page.textContent("#branch-title")) ?? "", /^Branch to live-2/);
    await session.updateMessage({
      id: "live-2",
      role: "assistant",
      parts: [{ type: "text", text: "Yes, Friday." }],
    });
    await page
      .locator('#conversation [data-message-id="live-2"]', { hasText: "Yes, Friday." })
      .waitFor({ timeout: 10_000 });
    await session.deleteMessages(["live-2"]);
    await page.waitForSelector('#conversation [data-message-id="live-2"]', {
      state: "detached",
      timeout: 10_000,
    });
    assert.deepEqual(pageErrors, []);
  });

  test("the stream's opening re-read leaves an unchanged page as it is; a write redraws it", async () => {
    await page.goto(server.url);
    // The page reads the branch once when the session opens and once more when the stream opens (its check).
    let histories = 0;
    let second!: () => void;
    const checked = new Promise<void>((resolve) => {
      second = resolve;
    });
    const onResponse = (response: { url(): string }) => {
      if (response.url().includes("/api/history") && ++histories === 2) second();
    };
    page.on("response", onResponse);
    try {
      await page.click('#sessions [data-session-id="demo-deploy"]');
      await page.waitForSelector('#conversation [data-message-id="a4"]');
      // Mark what is shown: a redraw replaces these nodes, and the mark goes with them.
      await page.$$eval("#conversation .msg, #graph *", (nodes) => {
        for (const node of nodes) node.setAttribute("data-kept", "");
      });
      const replaced = (selector: string) => page.locator(`${selector}:not([data-kept])`).count();
      await checked;
      // The check's answer is handled in the task that receives it; give that task time to run.
      await page.waitForTimeout(300);
      assert.equal(await replaced("#conversation .msg"), 0, "no message node was replaced");
      assert.equal(await replaced("#graph *"), 0, "no graph node was replaced");
      await writer.session("demo-deploy").appendMessage({
        id: "redraw-1",
        role: "user",
        parts: [{ type: "text", text: "A write redraws." }],
      });
      await page.waitForSelector('#conversation [data-message-id="redraw-1"]', { timeout: 10_000 });
      assert.ok((await replaced("#conversation .msg")) > 1, "the write redrew the conversation");
      assert.deepEqual(pageErrors, []);
    } finally {
      page.off("response", onResponse);
    }
  });

  test("a write that lands before the event stream is set up is shown all the same", async () => {
    const slow = await browser.newPage();
    slow.on("pageerror", (error) => pageErrors.push(error.message));
    // A loaded machine: the page's event request reaches the server (and subscribes) half a second late.
    await slow.route("**/api/events**", async (route) => {
      await new Promise((r) => setTimeout(r, 500));
      await route.continue();
    });
    try {
      await slow.goto(server.url);
      await slow.click('#sessions [data-session-id="demo-deploy"]');
      await slow.waitForSelector('#conversation [data-message-id="a4"]');
      await writer.session("demo-deploy").appendMessage({
        id: "early-1",
        role: "user",
        parts: [{ type: "text", text: "Before the stream." }],
      });
      await slow.waitForSelector('#conversation [data-message-id="early-1"]', { timeout: 10_000 });
      assert.deepEqual(pageErrors, []);
    } finally {
      await slow.close();
    }
  });

  test("a page whose stream 32 newer ones ended reconnects and follows again", async () => {
    await page.goto(server.url);
    await page.click('#sessions [data-session-id="demo-deploy"]');
    await page.waitForSelector('#conversation [data-message-id="a4"]');
    // 32 streams opened after the page's (the default cap): the page's, the oldest, is ended.
    const idle = await Promise.all(
      Array.from({ length: 32 }, () =>
        fetch(`${server.url}api/events?session=demo-deploy`, { headers: { "X-Agent-Session-Viewer": "1" } }),
      ),
    );
    try {
      assert.ok(idle.every((res) => res.status === 200));
      await writer.session("demo-deploy").appendMessage({
        id: "crowded-1",
        role: "user",
        parts: [{ type: "text", text: "After the crowd." }],
      });
      // Its EventSource comes back after the `retry` it was told (5 s) and re-reads on reopen.
      await page.waitForSelector('#conversation [data-message-id="crowded-1"]', { timeout: 15_000 });
      assert.deepEqual(pageErrors, []);
    } finally {
      await Promise.all(idle.map((res) => res.body?.cancel().catch(() => undefined)));
    }
  });

  test("the event stream is text/event-stream and refuses foreign hosts like every route", async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}api/events?session=demo-deploy`, {
      signal: controller.signal,
      headers: { "X-Agent-Session-Viewer": "1" },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    controller.abort();
    await res.body?.cancel().catch(() => undefined);
    // DNS rebinding: a page on a foreign name reaching the local port must not get a live stream either.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        `${server.url}api/events?session=demo-deploy`,
        { headers: { Host: "attacker.example", "X-Agent-Session-Viewer": "1" } },
        (foreign) => {
          foreign.resume();
          resolve(foreign.statusCode);
        },
      );
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 403);
  });
});
