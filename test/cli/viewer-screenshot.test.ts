// The viewer for documentation and CI: plain headless Chromium (no driver) renders a session whole with `?live=0`.
// Its --virtual-time-budget waits for open connections, so with the page's event stream open it never ends.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { CHROMIUM, chromiumSkip } from "../helpers/chromium.js";
import { runCli, type ServeProcess, startServe, tempDir } from "./helpers.js";

const skip = chromiumSkip("the viewer's plain-Chromium screenshot test");

/** Chromium's command line as docs/CLI.md gives it; killed after a minute, so a hang fails instead of stalling. */
function chromium(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(
    CHROMIUM,
    ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", ...args],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(guard);
      resolve({ code, stdout });
    }),
  );
}

describe("viewer rendered by plain headless Chromium", { skip }, () => {
  const tmp = tempDir();
  const db = tmp.path("screenshot.db");
  let server: ServeProcess;

  before(async () => {
    const demo = await runCli(["demo", "--db", db]);
    assert.equal(demo.code, 0, demo.stderr);
    server = await startServe(db);
  });

  after(async () => {
    const code = await server?.stop();
    tmp.remove();
    assert.equal(code, 0, "serve exits cleanly on SIGTERM");
  });

  test("?live=0 renders the open session by the time --virtual-time-budget ends", async () => {
    const url = `${server.url}?live=0#session=demo-deploy`;
    const dom = await chromium(["--dump-dom", url]);
    assert.equal(dom.code, 0, "Chromium ended (no open event stream kept its virtual time from running out)");
    assert.match(dom.stdout, /<h2[^>]*>Deploy planning<\/h2>/);
    assert.match(dom.stdout, /Branch to a4 · 5 messages/);
    assert.match(dom.stdout, /data-message-id="a4"/);
    assert.match(dom.stdout, /Done: a reminder to book the deploy window/);

    const png = tmp.path("viewer.png");
    const shot = await chromium(["--hide-scrollbars", "--window-size=1280,900", `--screenshot=${png}`, url]);
    assert.equal(shot.code, 0);
    assert.ok(existsSync(png), "the screenshot was written");
    assert.deepEqual([...readFileSync(png).subarray(1, 4)], [...Buffer.from("PNG")]);
  });
});
