import assert from "node:assert/strict";
import { test } from "node:test";
import { MissingDependencyError } from "../../src/errors.js";
import { importOptional, nodeBuiltin, nodeRequire } from "../../src/runtime/load.js";

test("importOptional names the package to install when it is missing", async () => {
  await assert.rejects(importOptional("agent-session-no-such-package", "Testing"), (error: unknown) => {
    assert.ok(error instanceof MissingDependencyError);
    assert.equal(error.code, "MISSING_DEPENDENCY");
    assert.equal(error.dependency, "agent-session-no-such-package");
    assert.match(error.message, /Testing needs .*npm install agent-session-no-such-package/);
    return true;
  });
  const zod = await importOptional<{ z: unknown }>("zod", "Testing");
  assert.equal(typeof zod.z, "object");
});

test("Node built-ins load on demand, and an unknown one is absent rather than an error", () => {
  assert.equal(typeof nodeBuiltin<typeof import("node:path")>("node:path")?.resolve, "function");
  assert.equal(nodeBuiltin("node:no-such-builtin"), undefined);
  assert.equal(typeof nodeRequire("Testing")("better-sqlite3"), "function");
});
