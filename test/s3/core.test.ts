import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BucketSkillProvider,
  R2SkillProvider,
  S3SkillProvider,
  type SkillBucket,
} from "../../src/s3/index.js";
import { assertSessionError, rejectsWithIssue } from "../helpers/session-error.js";

// Misbehaving stores cannot be produced by a healthy server, so these two cases use a stub bucket.
const stub = (list: SkillBucket["list"], read: SkillBucket["read"] = async () => null): SkillBucket => ({
  list,
  read,
  write: async () => undefined,
});

test("a truncated listing without a new cursor fails instead of looping forever", async () => {
  const noCursor = new BucketSkillProvider(stub(async () => ({ objects: [{ key: "a" }], truncated: true })));
  await assert.rejects(noCursor.get(), { name: "StorageError", code: "STORAGE" });
  const sameCursor = new BucketSkillProvider(
    stub(async () => ({ objects: [{ key: "a" }], truncated: true, cursor: "again" })),
  );
  await assert.rejects(sameCursor.get(), { name: "StorageError" });
});

test("driver errors become StorageError with the original as cause", async () => {
  const boom = new Error("socket hang up");
  const provider = new BucketSkillProvider(
    stub(
      async () => ({ objects: [], truncated: false }),
      async () => {
        throw boom;
      },
    ),
    { prefix: "skills/" },
  );
  await assert.rejects(provider.load("x"), (error: Error & { code?: string }) => {
    assert.equal(error.name, "StorageError");
    assert.equal(error.code, "STORAGE");
    assert.equal(error.cause, boom);
    return true;
  });
  assert.equal(await provider.get(), null);
});

test("a refused option or key names its field in the issues", async () => {
  const list = async () => ({ objects: [], truncated: false });
  assertSessionError(() => new BucketSkillProvider(stub(list), { keys: ["ok", "../up"] }), {
    code: "INVALID_ARGUMENT",
    path: "keys.1",
    rule: "format",
  });
  assertSessionError(() => new BucketSkillProvider(stub(list), { prefix: "a\u0000" }), {
    code: "INVALID_ARGUMENT",
    path: "prefix",
    rule: "format",
  });
  assertSessionError(() => new S3SkillProvider({ bucket: "" } as never), {
    code: "INVALID_ARGUMENT",
    path: "bucket",
  });
  assertSessionError(() => new R2SkillProvider({} as never, null as never), {
    code: "INVALID_ARGUMENT",
    path: "options",
    rule: "type",
  });
  await rejectsWithIssue(new BucketSkillProvider(stub(list)).set("a", 42 as never), {
    code: "INVALID_ARGUMENT",
    path: "content",
    rule: "type",
  });
});
