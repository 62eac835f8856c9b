// Node's AES-GCM and HMAC (runtime/aead.ts) give the bytes @noble gives, which a Worker without node:crypto uses:
// content sealed in one runtime opens in the other.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gcm } from "@noble/ciphers/aes.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { gcmOpen, gcmSeal, gcmSealBase64, hmacSha256Hex } from "../../src/runtime/aead.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

test("gcmSeal writes the nonce, then what @noble's AES-GCM writes, and gcmOpen opens it", () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const aad = new TextEncoder().encode("aad");
  for (const plain of ["", "hello", "é 机器 🙂".repeat(50)]) {
    const sealed = gcmSeal(key, nonce, aad, plain);
    const noble = gcm(key, nonce, aad).encrypt(new TextEncoder().encode(plain));
    assert.equal(hex(sealed), hex(nonce) + hex(noble));
    assert.equal(gcmSealBase64(key, nonce, aad, plain), Buffer.from(sealed).toString("base64"));
    assert.equal(gcmOpen(key, nonce, aad, sealed.subarray(12)), plain);
    const changed = sealed.slice(12);
    changed[0]! ^= 1;
    assert.throws(() => gcmOpen(key, nonce, aad, changed));
    assert.throws(() => gcmOpen(key, nonce, new TextEncoder().encode("other"), sealed.subarray(12)));
  }
});

test("hmacSha256Hex of a string is the HMAC of its UTF-8, as @noble computes it", () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  for (const text of ["", "content", "é 机器 🙂"]) {
    const bytes = new TextEncoder().encode(text);
    assert.equal(hmacSha256Hex(key, text), hex(hmac(sha256, key, bytes)));
    assert.equal(hmacSha256Hex(key, bytes), hmacSha256Hex(key, text));
  }
});
