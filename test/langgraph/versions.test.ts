// A checkpoint's channel versions as its `versions` column stores them (src/sql/checkpoints/versions.ts): packed
// short for the versions every saver writes, read back as the same object (numbers as numbers, strings as strings,
// names of any kind, in their order), and rows written before as JSON still read.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { packVersions, unpackVersions } from "../../src/sql/checkpoints/versions.js";
import { SqliteStore } from "../../src/sqlite/store.js";

const same = (versions: Record<string, unknown>) => {
  const text = packVersions(versions);
  const back = unpackVersions(text);
  assert.deepEqual(back, versions, text);
  assert.deepEqual(Object.keys(back), Object.keys(versions), text);
  for (const [k, v] of Object.entries(versions)) assert.equal(typeof back[k], typeof v, `${k} in ${text}`);
  return text;
};

test("the saver's versions pack to about half their JSON and read back exact", async () => {
  const store = new SqliteStore(":memory:");
  const saver = new AgentSessionSaver(store);
  let current: number | undefined;
  for (let i = 0; i < 300; i++) {
    const a = saver.getNextVersion(current);
    current = a;
    const versions = {
      __start__: a,
      messages: saver.getNextVersion(a),
      "branch:to:agent": saver.getNextVersion(a),
    };
    const text = same(versions);
    assert.ok(text.length < 0.6 * JSON.stringify(versions).length, text);
  }
  await store.close();
});

test("versions of every other kind read back as they were written", () => {
  same({});
  same({ "": 1 });
  same({
    a: 1,
    b: 2,
    c: 0,
    d: -3,
    e: 1.5,
    f: 0.000001,
    g: 1e21,
    h: 123456789012345,
    i: 1234567890123456,
    j: 123456789012345.6,
  });
  same({ a: "1", b: "00000000000000000000000000000002.0.123", c: "", d: "a,b#c$d&e!f~g%h" });
  same({ "!s": 1, "!m": "2", "!b": 3, "~x": 4, "a,b": 5, "x#y": 6, "a$b&c": 7, "%21": 8, "branch:to:": 9 });
  same({ "branch:to:a,b!c": 1.000000001, "branch:to:": 2.1, messages: 3.000000009, __start__: 10 });
  same({ "1": 1, "0": 2, __proto__x: 3 });
  same(JSON.parse('{"__proto__": 1.25, "constructor": 2}'));
  for (let i = 0; i < 200; i++) same({ x: Math.random() * 10 ** Math.floor(Math.random() * 20) });
});

test("a version JSON cannot write keeps the JSON form, and a JSON row reads as before", () => {
  assert.equal(packVersions({ a: Number.NaN }), '{"a":null}');
  assert.deepEqual(unpackVersions('{"messages":2.5,"x":"3"}'), { messages: 2.5, x: "3" });
  assert.deepEqual(unpackVersions("{}"), {});
  assert.deepEqual(unpackVersions("~"), {});
  assert.throws(() => unpackVersions("~abc"), { code: "STORAGE" });
  assert.throws(() => unpackVersions("~%E0#1"), { code: "STORAGE" }, "a broken escape");
  assert.throws(() => unpackVersions("~a$1x"), { code: "STORAGE" }, "a broken number");
});
