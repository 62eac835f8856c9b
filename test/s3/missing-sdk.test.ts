import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

test("without @aws-sdk/client-s3: R2 bindings work, S3 access fails with MissingDependencyError", () => {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", fixture("hide-aws-sdk.mjs"), fixture("without-aws-sdk.ts")],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), {
    r2: null,
    s3: { name: "MissingDependencyError", code: "MISSING_DEPENDENCY", dependency: "@aws-sdk/client-s3" },
  });
});
