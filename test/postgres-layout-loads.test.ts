// A single-node store runs no Citus code (docs/POSTGRES.md, "One layout object"): opened, written, searched and
// purged on PGlite, it loads no module of src/postgres/citus/, which the store imports only when opened with
// `distributed: true`. Each store in a child process of its own, whose every module load a resolve hook records;
// the distributed open (refused on PGlite, which has no Citus) shows the hook sees those loads.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pgliteSwitchedOff } from "./fixtures/postgres-db.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/layout-loads.ts", import.meta.url));

async function citusLoads(mode: "single" | "distributed"): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", FIXTURE, mode]);
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "[]") as string[];
}

const skip = pgliteSwitchedOff() ?? false;

test("a single-node store loads no module of src/postgres/citus/", { skip }, async () => {
  assert.deepEqual(await citusLoads("single"), []);
});

test("a store opened with distributed: true loads the Citus layout (the hook sees citus/ loads)", {
  skip,
}, async () => {
  assert.ok((await citusLoads("distributed")).includes("src/postgres/citus/layout.ts"));
});
