// agent-session/eve loads nothing of the optional peer `eve` until eve asks the provider for its tools: an app that
// imports the entry (or never uses it) pays nothing for eve (a child process records each module it resolves).
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { runFixture } from "../helpers/child.js";
import { EVE_SKIP } from "./contexts.js";

test("agent-session/eve loads no eve module before eve asks for the tools", { skip: EVE_SKIP }, async () => {
  const app = fileURLToPath(new URL("./lazy-app.ts", import.meta.url));
  const { before, after } = JSON.parse((await runFixture(app, [])).trim().split("\n").at(-1) as string);
  assert.deepEqual(before, []);
  assert.ok(
    (after as string[]).some((url) => url.includes("/node_modules/eve/")),
    "the control: the tools load eve",
  );
});
