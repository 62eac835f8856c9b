// createSessionStorage: a plain string is what to open; an unknown option name or a wrong argument type is
// INVALID_ARGUMENT on every storage type (a misspelt SQLite path used to keep everything in :memory:).
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  createSessionStorage,
  FileSessionStorage,
  parseModelId,
  RedisSessionStorage,
  SQLiteSessionStorage,
  setDefaultStorage,
} from "../../src/agent/index.js";
import { sampleState } from "../../src/testing/storage/fixtures.js";
import { assertSessionError } from "../helpers/session-error.js";

const make = createSessionStorage as (
  type: string,
  options?: unknown,
) => ReturnType<typeof createSessionStorage>;

describe("createSessionStorage", () => {
  it("takes a plain string as the SQLite path and keeps the sessions in that file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-factory-"));
    try {
      for (const given of [join(dir, "a.db"), { database: join(dir, "b.db") }]) {
        const storage = make("sqlite", given);
        const state = sampleState();
        await storage.save(state);
        await storage.close?.();
        const again = make("sqlite", given);
        assert.deepEqual(await again.list(), [state.id]);
        await again.close?.();
      }
      assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith(".db")).sort(), ["a.db", "b.db"]);
      assert.ok(make("sqlite") instanceof SQLiteSessionStorage, "no argument: :memory:");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an unknown option name on every type, naming it", () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["memory", { dir: "x" }, "dir"],
      ["file", { dir: "x", directory: "x" }, "directory"],
      ["sqlite", { path: "./s.db" }, "path"],
      ["sqlite", { filename: "./s.db" }, "filename"],
      ["postgres", { connection: "postgres://127.0.0.1/x", schemaName: "a" }, "schemaName"],
      ["redis", { connection: "redis://127.0.0.1:6379", keyPrefix: "a:" }, "keyPrefix"],
    ];
    // An unknown key's issue is at the key itself.
    for (const [type, options, path] of cases) {
      assertSessionError(() => make(type, options), { code: "INVALID_ARGUMENT", path, rule: "unknown_key" });
    }
  });

  it("refuses an argument of the wrong type on every type", () => {
    for (const type of ["memory", "file", "sqlite", "postgres", "redis"]) {
      for (const given of [42, [], true]) {
        assert.throws(() => make(type, given), { code: "INVALID_ARGUMENT" }, `${type} ${String(given)}`);
      }
    }
    assert.throws(() => make("memory", "x"), { code: "INVALID_ARGUMENT" });
    assert.throws(() => make("file"), { code: "INVALID_ARGUMENT" });
    // null is "no options", as everywhere: the types that need one say which.
    assert.ok(make("memory", null));
    assert.ok(make("sqlite", null) instanceof SQLiteSessionStorage);
    for (const type of ["file", "postgres", "redis"]) {
      assert.throws(() => make(type, null), { code: "INVALID_ARGUMENT" }, type);
    }
  });

  it("names the refused argument in the issues: the type, a missing option, the storage, the model", () => {
    assertSessionError(() => make("mongo"), { code: "INVALID_ARGUMENT", path: "type", rule: "one_of" });
    assertSessionError(() => make("postgres", {}), {
      code: "INVALID_ARGUMENT",
      path: "connection",
      rule: "required",
    });
    assertSessionError(() => new FileSessionStorage("./x", { compactLogBytes: -1 }), {
      code: "INVALID_ARGUMENT",
      path: "compactLogBytes",
      rule: "range",
    });
    assertSessionError(() => new FileSessionStorage("" as never), {
      code: "INVALID_ARGUMENT",
      path: "dir",
      rule: "required",
    });
    assertSessionError(() => new FileSessionStorage(5 as never), {
      code: "INVALID_ARGUMENT",
      path: "dir",
      rule: "type",
    });
    assertSessionError(() => new RedisSessionStorage("redis://127.0.0.1:1", { prefix: 5 as never }), {
      code: "INVALID_ARGUMENT",
      path: "prefix",
      rule: "type",
    });
    assertSessionError(() => setDefaultStorage({} as never), { code: "INVALID_ARGUMENT", path: "storage" });
    assertSessionError(() => parseModelId("no-such-model"), {
      code: "INVALID_ARGUMENT",
      path: "model",
      rule: "format",
    });
  });
});
