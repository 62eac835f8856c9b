import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { splitUtf8 } from "../src/sql/engines/sqlite/chunks.js";

const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const ALPHABET = ["a", "Z", " ", "é", "中", "😀", "🎉", "\n", '"', "\\"];

function randomText(seed: number, length: number, lone: boolean): string {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x;
  };
  let text = "";
  while (text.length < length) {
    if (lone && next() % 50 === 0) text += next() % 2 ? "\ud83d" : "\ude00";
    else text += ALPHABET[next() % ALPHABET.length];
  }
  return text;
}

describe("splitUtf8: continuation-row pieces", () => {
  for (const lone of [false, true]) {
    test(`pieces fit, rejoin exactly and never split a surrogate pair${lone ? " (with lone surrogates)" : ""}`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const text = randomText(seed, 5_000 + seed * 37, lone);
        for (const max of [4, 5, 7, 64, 1000]) {
          const pieces = splitUtf8(text, max);
          assert.equal(pieces.join(""), text);
          for (const [i, piece] of pieces.entries()) {
            assert.ok(bytes(piece) <= max, `piece ${i} is ${bytes(piece)} bytes > ${max}`);
            assert.ok(piece.length > 0);
            const last = piece.charCodeAt(piece.length - 1);
            const first = pieces[i + 1]?.charCodeAt(0) ?? 0;
            const splitPair = last >= 0xd800 && last <= 0xdbff && first >= 0xdc00 && first <= 0xdfff;
            assert.equal(splitPair, false, `piece ${i} ends inside a surrogate pair`);
          }
        }
      }
    });
  }

  test("text that fits is one piece, the same string", () => {
    const text = "hello 😀";
    assert.deepEqual(splitUtf8(text, 100), [text]);
    assert.deepEqual(splitUtf8(text, bytes(text)), [text]);
  });
});
