// CI's run on Node 24 sets AGENT_SESSION_PGLITE=off (.ci/run): a test file that starts a PGlite of its own without
// asking the switch (test/fixtures/postgres-db.ts) would run there anyway, where processes starting PGlite at once
// can crash V8 (nodejs/node#64500). This holds the rule for the next test file too.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// newPGlite (test/fixtures/pglite.ts, which the rule exempts with the switch itself) starts one too.
const STARTS_PGLITE = /new PGlite\(|PGlite\.create\(|newPGlite\(/;
const ASKS_SWITCH = /pgliteSwitchedOff|pgliteUnlessSwitchedOff/;
const EXEMPT = new Set(["test/fixtures/postgres-db.ts", "test/fixtures/pglite.ts"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

test("every test file that starts a PGlite asks AGENT_SESSION_PGLITE's switch", () => {
  const unswitched = sources(join(ROOT, "test"))
    .map((path) => relative(ROOT, path).split("\\").join("/"))
    .filter((path) => !EXEMPT.has(path))
    .filter((path) => {
      const text = readFileSync(join(ROOT, path), "utf8");
      return STARTS_PGLITE.test(text) && !ASKS_SWITCH.test(text);
    });
  assert.deepEqual(
    unswitched,
    [],
    "skip their PGlite cases with pgliteSwitchedOff() or use pgliteUnlessSwitchedOff()",
  );
});
