import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { FileSessionStorage, MemorySessionStorage } from "../../src/agent/index.js";
import { entry, sampleMessages, sampleState } from "../../src/testing/storage/fixtures.js";

const root = mkdtempSync(join(tmpdir(), "agent-file-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => join(root, `d${++counter}`);

describe("FileSessionStorage", () => {
  it("stores {id}.json and refuses ids that could leave the directory", async () => {
    const dir = freshDir();
    const storage = new FileSessionStorage(dir);
    const state = sampleState({ id: "sess_abc123" });
    await storage.save(state);
    assert.ok(existsSync(join(dir, "sess_abc123.json")));
    assert.equal(JSON.parse(readFileSync(join(dir, "sess_abc123.json"), "utf8")).id, "sess_abc123");
    for (const id of ["../escape", "/etc/passwd", "a/b", "a\\b", "..", ".hidden", "x".repeat(201)]) {
      await assert.rejects(storage.load(id), { code: "INVALID_ARGUMENT" }, id);
      await assert.rejects(storage.save({ ...state, id }), { code: "INVALID_ARGUMENT" }, id);
      await assert.rejects(storage.delete(id), { code: "INVALID_ARGUMENT" }, id);
    }
    assert.deepEqual(readdirSync(dir), ["sess_abc123.json"]);
  });

  it("appends one log line per write and folds the log into the snapshot once it outgrows it", async () => {
    const dir = freshDir();
    const storage = new FileSessionStorage(dir, { compactLogBytes: 4096 });
    const state = sampleState({ id: "grow", messages: [] });
    await storage.save(state);
    const snapshotBefore = readFileSync(join(dir, "grow.json"), "utf8");
    await storage.appendMessages("grow", sampleMessages("a"), { updatedAt: 1 });
    assert.equal(
      readFileSync(join(dir, "grow.json"), "utf8"),
      snapshotBefore,
      "an append does not rewrite the snapshot",
    );
    assert.equal(readFileSync(join(dir, "grow.jsonl"), "utf8").trim().split("\n").length, 1);
    for (let i = 0; i < 40; i++)
      await storage.appendMessages("grow", sampleMessages(`b${i}-`), { updatedAt: 2 + i });
    const loaded = (await storage.load("grow"))!;
    assert.equal(loaded.messages.length, 164);
    const logSize = existsSync(join(dir, "grow.jsonl")) ? readFileSync(join(dir, "grow.jsonl")).length : 0;
    const snapshotSize = readFileSync(join(dir, "grow.json")).length;
    assert.ok(snapshotSize > snapshotBefore.length, "the log was folded into the snapshot at least once");
    assert.ok(logSize <= Math.max(4096, snapshotSize) + 2048, "the log stays bounded by the snapshot size");
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.includes("tmp")),
      [],
      "no temporary files are left behind",
    );
  });

  it("skips a log line torn by a crash, and later appends still count", async () => {
    const dir = freshDir();
    const storage = new FileSessionStorage(dir);
    await storage.save(sampleState({ id: "torn", messages: [] }));
    await storage.appendMessages("torn", sampleMessages("a").slice(0, 1), { updatedAt: 1 });
    appendFileSync(join(dir, "torn.jsonl"), '\n{"g":"partial-write","m":[{"id":"lost"');
    await storage.appendMessages("torn", sampleMessages("b").slice(0, 1), {
      updatedAt: 2,
      usage: [entry(1)],
    });
    const loaded = (await storage.load("torn"))!;
    assert.deepEqual(
      loaded.messages.map((m) => m.id),
      ["a1", "b1"],
    );
    assert.equal(loaded.usage.entries.length, 3, "two saved entries plus the appended one");
  });

  it("ignores log lines of an older snapshot (a fold that stopped before deleting the log)", async () => {
    const dir = freshDir();
    const storage = new FileSessionStorage(dir);
    await storage.save(sampleState({ id: "gen", messages: [] }));
    await storage.appendMessages("gen", sampleMessages("a").slice(0, 2), { updatedAt: 1 });
    const staleLog = readFileSync(join(dir, "gen.jsonl"), "utf8");
    const state = (await storage.load("gen"))!;
    await storage.save(state); // a fold: new snapshot generation, log removed
    writeFileSync(join(dir, "gen.jsonl"), staleLog); // ...as if the process died before the unlink
    const loaded = (await storage.load("gen"))!;
    assert.equal(loaded.messages.length, 2, "old lines are not applied twice");
  });

  it("lists only session snapshots, sorted", async () => {
    const dir = freshDir();
    const storage = new FileSessionStorage(dir);
    assert.deepEqual(await storage.list(), [], "a missing directory lists nothing");
    for (const id of ["b", "a", "c.v2"]) await storage.save(sampleState({ id }));
    writeFileSync(join(dir, "notes.txt"), "x");
    writeFileSync(join(dir, ".abc.tmp"), "x");
    assert.deepEqual(await storage.list(), ["a", "b", "c.v2"]);
  });
});

describe("MemorySessionStorage", () => {
  it("clear() and size()", async () => {
    const storage = new MemorySessionStorage();
    await storage.save(sampleState());
    await storage.save(sampleState());
    assert.equal(storage.size(), 2);
    storage.clear();
    assert.equal(storage.size(), 0);
    assert.deepEqual(await storage.list(), []);
  });

  it("copies bytes and URLs the way every other storage serialises them", async () => {
    const storage = new MemorySessionStorage();
    const state = sampleState({
      messages: [
        {
          id: "img",
          createdAt: 1,
          role: "user",
          content: [
            { type: "image", image: new Uint8Array([104, 105]) },
            { type: "file", data: new URL("https://example.com/a.pdf"), mediaType: "application/pdf" },
          ],
        },
      ],
    });
    await storage.save(state);
    const [message] = (await storage.load(state.id))!.messages;
    assert.deepEqual(message?.content, [
      { type: "image", image: "aGk=" },
      { type: "file", data: "https://example.com/a.pdf", mediaType: "application/pdf" },
    ]);
  });
});
