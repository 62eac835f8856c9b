// Learned facts in the CLI's export (format version 3): every fact of the store travels with its scope, sources,
// state and producer, and an import writes them after the sessions they name; a partial export carries only the facts
// sourced in its sessions; a file with facts is refused, before anything is written, by a store that keeps none; a
// fact source naming a message neither stored nor in the file is left out, with a report.
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { test } from "node:test";
import { checkImport } from "../../src/cli/transfer/check.js";
import { DanglingSources } from "../../src/cli/transfer/dangling.js";
import { writeExport } from "../../src/cli/transfer/export.js";
import { FactSourceCheck } from "../../src/cli/transfer/fact-sources.js";
import { readImport } from "../../src/cli/transfer/import.js";
import { readLines } from "../../src/cli/transfer/lines.js";
import type { Fact, FactCapableStore } from "../../src/contract/facts.js";
import type { TransferCapableStore } from "../../src/contract/transfer.js";
import { SessionManager } from "../../src/manager/manager.js";
import { MemoryStore } from "../../src/memory/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { exportFacts } from "../../src/store/transfer/facts.js";
import { msg } from "../../src/testing/contract/harness.js";

const none = { increment() {}, setTotal() {}, stop() {} };

async function exported(store: TransferCapableStore, sessionIds: string[] = []): Promise<string> {
  let text = "";
  const write = async (chunk: string) => {
    text += chunk;
  };
  await writeExport(store, write, {
    sessionIds,
    progress: none,
    countFirst: false,
  });
  return text;
}

async function importText(store: TransferCapableStore, text: string) {
  const read = () => readLines(Readable.from([text]), 1 << 24);
  const plan = await checkImport(store, read);
  return readImport(store, read(), () => {}, undefined, plan.dangling);
}

async function seeded(): Promise<SqliteStore> {
  const store = new SqliteStore(":memory:");
  const manager = SessionManager.create(store);
  await manager.create("one", { id: "a1", owner: "alice" });
  await manager.create("two", { id: "a2", owner: "alice" });
  await manager.append("a1", msg("m0", "Alice moved to Boston"));
  await manager.append("a2", msg("n0", "Alice lived in Paris"));
  const alice = { owner: "alice" };
  const source = (sessionId: string, messageId: string) => ({ sessionId, messageId });
  await store.facts.add(alice, [
    {
      id: "paris",
      text: "Alice lives in Paris.",
      about: "Alice",
      observedAt: 1,
      sources: [source("a2", "n0")],
      producer: "function:t",
    },
    {
      id: "boston",
      text: "Alice moved to Boston.",
      observedAt: 2,
      sources: [source("a1", "m0")],
      producer: "model:x/y",
    },
    {
      id: "both",
      text: "Alice moves.",
      observedAt: 3,
      sources: [source("a1", "m0"), source("a2", "n0")],
      producer: "function:t",
    },
  ]);
  await store.facts.supersede(alice, "paris", "boston");
  return store;
}

async function factsOf(store: FactCapableStore): Promise<Fact[]> {
  const facts: Fact[] = [];
  for await (const fact of exportFacts(store.facts)) facts.push(fact);
  return facts;
}

test("a whole-store export carries every fact, and an import writes them as they were", async () => {
  const from = await seeded();
  const to = new MemoryStore();
  try {
    const text = await exported(from);
    const lines = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines.at(-1)?.facts, 3);
    const paris = lines.find((line) => line.type === "fact" && line.id === "paris");
    assert.deepEqual(
      [paris?.owner, paris?.session, paris?.status, paris?.supersededBy, paris?.producer, paris?.sources],
      ["alice", null, "superseded", "boston", "function:t", [{ session: "a2", message: "n0" }]],
    );
    const summary = await importText(to, text);
    assert.deepEqual(summary.facts, { inserted: 3, skipped: 0 });
    assert.deepEqual(await factsOf(to), await factsOf(from));
    assert.deepEqual((await importText(to, text)).facts, { inserted: 0, skipped: 3 }, "idempotent");
  } finally {
    await from.close();
  }
});

test("an export of a store whose facts' messages were deleted imports whole: no fact names a missing message", async () => {
  const from = await seeded();
  const to = new SqliteStore(":memory:");
  try {
    // A fact naming a message the store never held is refused (it would outlive every delete, and no file carrying
    // it imports); deleting the messages takes their facts, or those sources of a fact with another left.
    const ghost = { sessionId: "a2", messageId: "ghost" };
    const fact = { text: "Ghostly.", observedAt: 1, sources: [ghost], producer: "function:t" };
    await assert.rejects(from.facts.add({ owner: "alice" }, [fact]), { code: "INVALID_ARGUMENT" });
    await from.session("a2").clearMessages();
    assert.deepEqual(
      (await factsOf(from)).map((f) => [f.id, f.sources.length]),
      [
        ["boston", 1],
        ["both", 1],
      ],
    );
    const summary = await importText(to, await exported(from));
    assert.deepEqual(summary.facts, { inserted: 2, skipped: 0 });
    assert.deepEqual(await factsOf(to), await factsOf(from));
  } finally {
    await from.close();
    await to.close();
  }
});

test("a partial export carries only the facts whose every source is in its sessions", async () => {
  const from = await seeded();
  try {
    const text = await exported(from, ["a1"]);
    const facts = text.split("\n").filter((line) => line.includes('"type":"fact"'));
    assert.deepEqual(
      facts.map((line) => (JSON.parse(line) as { id: string }).id),
      ["boston"],
    );
  } finally {
    await from.close();
  }
});

test("a store without facts refuses a file with facts before writing anything", async () => {
  const from = await seeded();
  const memory = new MemoryStore();
  // The store as another library's would be: the same transfer, no `facts`.
  const bare = new Proxy(memory, {
    get: (target, key) => (key === "facts" ? undefined : Reflect.get(target, key, target)),
  }) as unknown as TransferCapableStore;
  try {
    const text = await exported(from);
    await assert.rejects(importText(bare, text), /holds learned facts and this store keeps none/);
    assert.deepEqual(await memory.registry.list(), [], "nothing was written");
  } finally {
    await from.close();
  }
});

/** The export with fact `id`'s first source renamed to message `message` of session `session`. */
function withSource(text: string, id: string, session: string, message: string): string {
  return text
    .split("\n")
    .map((line) => {
      if (!line.includes('"type":"fact"')) return line;
      const record = JSON.parse(line) as { id: string; sources: { session: string; message: string }[] };
      if (record.id !== id) return line;
      record.sources[0] = { session, message };
      return JSON.stringify(record);
    })
    .join("\n");
}

test("a fact source neither in the file nor stored is left out and reported, a fact left with none not imported", async () => {
  const from = await seeded();
  try {
    const text = await exported(from);
    // As an export of a store written before facts' sources were checked: a message never stored, or a session
    // neither stored nor in the file. "boston" loses its only source, "both" one of two.
    for (const [session, message] of [
      ["a1", "ghost"],
      ["elsewhere", "m0"],
    ] as const) {
      const to = new SqliteStore(":memory:");
      try {
        const broken = withSource(withSource(text, "boston", session, message), "both", session, message);
        const summary = await importText(to, broken);
        assert.deepEqual(summary.dangling, {
          sources: 2,
          facts: 1,
          named: [
            { fact: "boston", session, message },
            { fact: "both", session, message },
          ],
        });
        assert.deepEqual(summary.facts, { inserted: 2, skipped: 0 });
        const facts = await factsOf(to);
        assert.deepEqual(facts.map((f) => f.id).sort(), ["both", "paris"]);
        assert.deepEqual(facts.find((f) => f.id === "both")?.sources, [{ sessionId: "a2", messageId: "n0" }]);
      } finally {
        await to.close();
      }
    }
    // A source the store holds (not the file) is kept: the sessions were imported before, the facts come now.
    const to = new SqliteStore(":memory:");
    try {
      await importText(to, await exported(from, ["a1", "a2"]));
      const summary = await importText(to, text);
      assert.equal(summary.dangling, undefined, "nothing left out");
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
});

test("fact sources past the bound are found in rounds, each reading the file again up to its facts", async () => {
  const from = await seeded();
  try {
    const text = await exported(from);
    const reads: number[] = [];
    const read = (file: string) => () => {
      reads.push(1);
      return readLines(Readable.from([file]), 1 << 24);
    };
    const dangling = new DanglingSources();
    const check = new FactSourceCheck(read(text), dangling, 1);
    // Each note fills the set: the file is read again, and the source found before its fact's line.
    const last = text.trim().split("\n").length;
    await check.need("a1", "m0", last - 1, "boston");
    await check.need("a2", "n0", last - 1, "paris");
    assert.equal(reads.length, 2);
    assert.equal(dangling.has("a1", "m0") || dangling.has("a2", "n0"), false);
    // A source that only comes after its fact is not earlier in the file: noted, the write pass leaves it out.
    await new FactSourceCheck(read(text), dangling, 1).need("a1", "m0", 2, "early");
    assert.equal(dangling.has("a1", "m0"), true);
  } finally {
    await from.close();
  }
});
