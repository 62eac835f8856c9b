// The two demos (`npm run demo`, the quick start's example, and the CLI's `demo` command) write one database: the
// CLI's default, so the commands a newcomer runs next read what either demo wrote without a --db.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseJson, runCli, tempDir } from "./helpers.js";

const tmp = tempDir();
after(() => tmp.remove());

const EXAMPLE = fileURLToPath(new URL("../../examples/demo.ts", import.meta.url));

test("npm run demo and agent-session demo write the CLI's default database", async () => {
  const cwd = tmp.dir;
  // What `npm run demo` runs, from the directory it writes into.
  const child = spawn(process.execPath, ["--import", import.meta.resolve("tsx"), EXAMPLE], {
    cwd,
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout.resume();
  const [code] = (await once(child, "close")) as [number | null];
  assert.equal(code, 0);
  const cli = await runCli(["demo"], { cwd });
  assert.equal(cli.code, 0, cli.stderr);
  const ids = parseJson<{ id: string }[]>(await runCli(["ls", "--json"], { cwd })).map((s) => s.id);
  assert.ok(ids.includes("demo"), `the example's session is in the CLI's default database: ${ids}`);
  assert.ok(ids.includes("demo-deploy"), `the CLI demo's sessions beside it: ${ids}`);
  const tree = await runCli(["tree", "demo"], { cwd });
  assert.equal(tree.code, 0, tree.stderr);
  assert.match(tree.stdout, /a2/);
});
