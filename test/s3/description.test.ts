import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeDescription, encodeDescription, MAX_DESCRIPTION_LENGTH } from "../../src/s3/index.js";

describe("skill descriptions in object metadata", () => {
  test("printable ASCII is stored as is; anything else becomes one RFC 2047 encoded word", () => {
    assert.equal(encodeDescription("API Reference documentation"), "API Reference documentation");
    assert.equal(encodeDescription("Café"), "=?UTF-8?B?Q2Fmw6k=?=");
    // A plain value that looks like an encoded word is encoded too, so reading it back cannot change it.
    const lookalike = "=?UTF-8?B?QQ==?=";
    assert.notEqual(encodeDescription(lookalike), lookalike);
    assert.equal(decodeDescription(encodeDescription(lookalike)), lookalike);
  });

  test("descriptions become one trimmed line, capped in code points; blank ones are not stored", () => {
    assert.equal(encodeDescription("  two\r\nlines\tand\u0000nul  "), "two lines and nul");
    assert.equal(encodeDescription(" \n "), undefined);
    assert.equal(encodeDescription(undefined), undefined);
    const long = "🎉".repeat(MAX_DESCRIPTION_LENGTH + 10);
    const stored = encodeDescription(long)!;
    assert.equal(decodeDescription(stored), "🎉".repeat(MAX_DESCRIPTION_LENGTH));
    assert.ok(stored.length < 2048 - "description".length, "fits the 2 KB custom-metadata limit");
  });

  test("decoding: B and Q words, several words joined, anything malformed is shown as stored", () => {
    const samples = ["Grüße — 日本語 🎉", "plain", "x".repeat(MAX_DESCRIPTION_LENGTH)];
    for (const text of samples) assert.equal(decodeDescription(encodeDescription(text)), text);
    assert.equal(decodeDescription("=?utf-8?q?Caf=C3=A9_au_lait?="), "Café au lait");
    assert.equal(decodeDescription("=?UTF-8?B?R3LDvA==?= =?UTF-8?B?w59l?="), "Grüße");
    assert.equal(decodeDescription("=?ISO-8859-1?Q?Gr=FC=DFe?="), "Grüße");
    assert.equal(decodeDescription("=?UTF-8?B?////?="), "=?UTF-8?B?////?=", "invalid UTF-8 stays raw");
    assert.equal(decodeDescription("=?no-such-charset?B?QQ==?="), "=?no-such-charset?B?QQ==?=");
    assert.equal(decodeDescription("Raw UTF-8 from the reference: ñ"), "Raw UTF-8 from the reference: ñ");
    assert.equal(decodeDescription("line\nbreak"), "line break");
    assert.equal(decodeDescription(""), undefined);
    assert.equal(decodeDescription(undefined), undefined);
  });
});
