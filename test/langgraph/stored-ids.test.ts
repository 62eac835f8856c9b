// Checkpoint ids as stored (src/sql/checkpoints/ids.ts): a round trip of any string, a canonical uuid in 17 bytes,
// and the stored bytes' order (memcmp, shorter first: SQLite's BLOB order, Postgres's bytea order) the ids' UTF-8
// order, for uuids, ids that are not, and the two mixed.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { idOf, storedId } from "../../src/sql/checkpoints/ids.js";

const utf8 = (s: string) => Buffer.from(s, "utf8");

// Ids near the uuids' edges and gaps: prefixes, each byte class at each position, past the end, other cases.
function nearUuid(next: () => number, u: string): string {
  const at = Math.floor(next() * 38);
  const chars = ["", "-", "/", "0", "9", ":", "`", "a", "f", "g", "A", "F", "~", "é", "00", "ff"];
  const c = chars[Math.floor(next() * chars.length)]!;
  const kind = Math.floor(next() * 3);
  if (kind === 0) return u.slice(0, at) + c;
  if (kind === 1) return u.slice(0, at) + c + u.slice(at + 1);
  return u.slice(0, at) + c + u.slice(at);
}

function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

const EDGES = [
  "",
  "0",
  "-",
  "00000000-0000-0000-0000-000000000000",
  "00000000-0000-0000-0000-00000000000",
  "00000000-0000-0000-0000-0000000000000",
  "00000000",
  "0000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "ffffffff-ffff-ffff-ffff-ffffffffffffx",
  "ffffffff-ffff-ffff-ffff-fffffffffffg",
  "g",
  "1ef5a3c2-0000-6000-8000-000000000000",
  "1EF5A3C2-0000-6000-8000-000000000000",
  "checkpoint-1",
  "2",
  "10",
  "1ef",
  "1ef5a3c2-",
  "1ef5a3c2-0",
];

test("every id reads back as it was written, a canonical uuid in 17 bytes", () => {
  const u = randomUUID();
  assert.equal(storedId(u).length, 17);
  const next = rng(7);
  for (const id of [...EDGES, u, ...Array.from({ length: 500 }, () => nearUuid(next, randomUUID()))]) {
    assert.equal(idOf(storedId(id)), id, JSON.stringify(id));
  }
});

test("stored ids sort as their text does, uuids and other ids mixed", () => {
  const next = rng(89);
  const uuids = Array.from({ length: 200 }, () => randomUUID());
  // Shared prefixes so that ids fall in the same gaps and beside the same uuids.
  const base = uuids.slice(0, 20);
  const ids = [
    ...EDGES,
    ...uuids,
    ...Array.from({ length: 2000 }, () => nearUuid(next, base[Math.floor(next() * base.length)]!)),
  ];
  const byText = [...new Set(ids)].sort((a, b) => Buffer.compare(utf8(a), utf8(b)));
  const byStored = [...new Set(ids)].sort((a, b) => Buffer.compare(storedId(a), storedId(b)));
  assert.deepEqual(byStored, byText);
});

test("a column holding no stored id is a STORAGE error", () => {
  assert.throws(() => idOf(new Uint8Array([1, 2, 3])), { code: "STORAGE" });
  assert.throws(() => idOf(new Uint8Array()), { code: "STORAGE" });
  assert.throws(() => idOf("1ef5a3c2-0000-6000-8000-000000000000"), { code: "STORAGE" });
});
