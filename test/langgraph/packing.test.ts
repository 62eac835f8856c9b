// Checkpoint payloads compressed at rest (src/sql/checkpoints/packing.ts): every stored tag reads back as the
// serializer's tag and bytes, rows written before compression read as they are, and a small payload stays as it is.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pack, unpack } from "../../src/sql/checkpoints/packing.js";

const text = (s: string) => new TextEncoder().encode(s);
const message = (i: number) =>
  `{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"message ${i} says the same things again and again","additional_kwargs":{},"response_metadata":{},"id":"m${i}"}}`;

test("a payload round-trips through pack and unpack under any tag, compressed where it pays", () => {
  const list = text(`[${Array.from({ length: 20 }, (_, i) => message(i)).join(",")}]`);
  for (const type of ["json", "bytes", "custom|z1", "custom|r", "a|b", "empty"]) {
    const packed = pack(type, list);
    assert.ok(packed.data.length < list.length / 2, `${type}: compressed`);
    const back = unpack(packed.type, packed.data);
    assert.deepEqual({ type: back.type, data: new Uint8Array(back.data) }, { type, data: list });
    const small = text("[1,2]");
    const kept = pack(type, small);
    assert.deepEqual(kept.data, small);
    assert.deepEqual(unpack(kept.type, kept.data), { type, data: small });
  }
});

test("a row written before compression (a tag without |) reads as it is", () => {
  const data = text(message(1));
  assert.deepEqual(unpack("json", data), { type: "json", data });
});

test("a damaged compressed row is a STORAGE error", () => {
  assert.throws(() => unpack("json|z1", text("not deflate at all")), { code: "STORAGE" });
});
