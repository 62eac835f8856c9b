// A single-node store runs no Citus code (docs/POSTGRES.md, "One layout object"): opened, written, searched and
// purged on PGlite, it loads no module of src/postgres/citus/, which the store imports only when opened with
// `distributed: true`. Each store in a child process of its own, whose every module load a resolve hook records;
// the distributed open after it (refused on PGlite, which has no Citus) shows the hook sees those loads.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/layout-loads.ts", import.meta.url));

/** The src/postgres/citus/ modules the child loaded by the end of its single-node store and of its distributed open. */
async function citusLoads(): Promise<{ single: string[]; distributed: string[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", FIXTURE]);
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as { single: string[]; distributed: string[] };
}

const skip = pgliteSwitchedOff() ?? false;

test("a single-node store loads no module of src/postgres/citus/; a distributed open loads its layout", {
  skip,
}, async () => {
  const loads = await citusLoads();
  assert.deepEqual(loads.single, []);
  // The control: the hook does see the citus/ modules a distributed open loads.
  assert.ok(loads.distributed.includes("src/postgres/citus/layout.ts"), JSON.stringify(loads));
});
