// Without the sqlite-vec package a SQLite store's default vector index fails with MISSING_DEPENDENCY, and the
// message says that only that index needs the package: vectorIndex "plain" works without it (issue #63).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const fixture = (name: string) => fileURLToPath(new URL(`./vectors/fixtures/${name}`, import.meta.url));

test("without sqlite-vec: the error says only the sqlite-vec index needs it, and the plain index works", () => {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", fixture("hide-sqlite-vec.mjs"), fixture("without-sqlite-vec.ts")],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  const { auto, plain } = JSON.parse(run.stdout) as {
    auto: { name: string; code: string; message: string };
    plain: unknown;
  };
  assert.equal(auto.code, "MISSING_DEPENDENCY");
  assert.equal(auto.name, "MissingDependencyError");
  assert.match(
    auto.message,
    /^The sqlite-vec index of vector recall on SQLite needs the "sqlite-vec" package/,
  );
  assert.match(auto.message, /npm install sqlite-vec; only that index needs it/);
  assert.match(auto.message, /vectorIndex: "plain" .* works without the package$/);
  assert.deepEqual(plain, { index: "sqlite-blob", embedded: 1, failed: 0 });
});

test("without sqlite-vec: an append while the background work waits to retry is reported, never an unhandled rejection", () => {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", fixture("hide-sqlite-vec.mjs"), fixture("failing-start.ts")],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  const codes = JSON.parse(run.stdout) as string[];
  // One report, or more where the retry came before close() on a slow machine: each the missing package.
  assert.ok(codes.length >= 1);
  assert.ok(
    codes.every((code) => code === "MISSING_DEPENDENCY"),
    run.stdout,
  );
});
