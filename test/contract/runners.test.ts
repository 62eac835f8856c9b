// agent-session/testing under runners other than node:test: the suites only declare tests through the injected
// `{ describe, it }`, hand each test a body with no declared parameter (jest and mocha read a parameter as a
// `done` callback), and skip through whatever the runner offers: the context's skip() (node:test, vitest), mocha's
// `this.skip()`, or a printed reason (jest). Fake runners with each convention stand in for the real ones.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MemorySessionStorage } from "../../src/agent/index.js";
import { MemoryStore } from "../../src/memory/store.js";
import { runProviderContract, runStorageContract, type TestApi } from "../../src/testing/index.js";

interface Declared {
  name: string;
  body: (...args: unknown[]) => Promise<void>;
}

/** Declares a suite with a runner that records its tests (full names) instead of running them. */
function declare(register: (api: TestApi) => void): Declared[] {
  const path: string[] = [];
  const tests: Declared[] = [];
  register({
    describe(name, body) {
      path.push(name);
      try {
        body();
      } finally {
        path.pop();
      }
    },
    it(name, body) {
      tests.push({ name: [...path, name].join(" > "), body });
    },
  });
  return tests;
}

class Skipped extends Error {}

/** Runs a declared test as each runner calls it; resolves to the skip reason, or null when it ran to the end. */
const runAs = {
  /** jest: no argument, no skip in `this`; a skip is a printed line. */
  async jest(test: Declared, printed: string[]): Promise<string | null> {
    const info = console.info;
    const before = printed.length;
    console.info = (line: string) => void printed.push(line);
    try {
      await test.body.call({});
    } finally {
      console.info = info;
    }
    return printed.length > before ? printed.at(-1)! : null;
  },
  /** vitest: a context whose skip(note) throws. */
  async vitest(test: Declared): Promise<string | null> {
    const context = {
      skip(note?: string): never {
        throw new Skipped(note);
      },
    };
    try {
      await test.body(context);
      return null;
    } catch (error) {
      if (error instanceof Skipped) return error.message;
      throw error;
    }
  },
  /** mocha: no argument, `this.skip()` throws (and takes no reason). */
  async mocha(test: Declared): Promise<string | null> {
    try {
      await test.body.call({
        skip(): never {
          throw new Skipped("pending");
        },
      });
      return null;
    } catch (error) {
      if (error instanceof Skipped) return error.message;
      throw error;
    }
  },
};

const storage = () =>
  declare((api) =>
    runStorageContract(api, { name: "memory", create: async () => new MemorySessionStorage() }),
  );

describe("agent-session/testing with other runners", () => {
  test("every test body declares no parameter, so jest and mocha wait for its promise", () => {
    const stores = declare((api) =>
      runProviderContract(api, { name: "memory", create: async (policy) => new MemoryStore(policy) }),
    );
    assert.equal(stores.length, 307, "the store contract declares its tests under any runner");
    assert.equal(new Set(stores.map((t) => t.name)).size, stores.length, "with distinct names");
    const storages = storage();
    assert.equal(storages.length, 12);
    for (const t of [...stores, ...storages]) assert.equal(t.body.length, 0, t.name);
  });

  test("jest: the SessionStorage contract passes and a capability gap prints its reason", async () => {
    const printed: string[] = [];
    const outcomes = [];
    for (const t of storage()) outcomes.push(await runAs.jest(t, printed));
    assert.deepEqual(printed, [
      "# SKIP is durable: a second instance over the same data sees everything: in-process storage",
    ]);
    assert.equal(outcomes.filter((o) => o === null).length, 11);
  });

  test("vitest and mocha: the skip goes through the runner, with the reason where it takes one", async () => {
    for (const t of storage()) {
      const durable = t.name.endsWith("sees everything");
      assert.equal(await runAs.vitest(t), durable ? "in-process storage" : null, t.name);
      assert.equal(await runAs.mocha(t), durable ? "pending" : null, t.name);
    }
  });

  test("the store contract's skips work the same way", async () => {
    const stores = declare((api) =>
      runProviderContract(api, { name: "memory", create: async (policy) => new MemoryStore(policy) }),
    );
    const reopen = stores.find((t) => t.name.endsWith("attachments > payloads survive a reopen"));
    assert.ok(reopen);
    assert.equal(await runAs.vitest(reopen), "in-process store");
    const printed: string[] = [];
    assert.match((await runAs.jest(reopen, printed)) ?? "", /payloads survive a reopen: in-process store$/);
    const first = stores[0]!;
    assert.equal(await runAs.vitest(first), null, first.name);
  });

  test("a suite-level skip (a server that is not there) is one skipped test with the reason", async () => {
    const tests = declare((api) =>
      runStorageContract(api, {
        name: "down",
        skip: "no server",
        create: async () => new MemorySessionStorage(),
      }),
    );
    assert.deepEqual(
      tests.map((t) => t.name),
      ["SessionStorage contract: down > every test"],
    );
    assert.equal(await runAs.vitest(tests[0]!), "no server");
  });

  test("a runner or target of the wrong shape is a TypeError, before any test is declared", () => {
    const create = async () => new MemoryStore();
    assert.throws(() => runProviderContract({} as TestApi, { name: "x", create }), TypeError);
    assert.throws(
      () => runProviderContract({ describe, it: test }, { name: "x" } as never),
      /runProviderContract\(\) needs a target with create\(\)/,
    );
    assert.throws(
      () => runStorageContract({ describe, it: test }, { name: "", create } as never),
      /runStorageContract\(\) needs a target with a name/,
    );
  });
});

test("no module outside src/testing imports it: the suites stay out of every other entry", () => {
  const src = fileURLToPath(new URL("../../src", import.meta.url));
  const files = (readdirSync(src, { recursive: true }) as string[]).filter(
    (file) => file.endsWith(".ts") && !file.startsWith("testing"),
  );
  assert.ok(files.length > 100);
  const importers = files.filter((file) =>
    /from "[./]*\/testing\//.test(readFileSync(join(src, file), "utf8")),
  );
  assert.deepEqual(importers, []);
});
