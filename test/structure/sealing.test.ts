// Sealing happens at the row boundary (src/store/crypto/row-codec.ts): a column is sealed by naming its codec kind
// in the owner-data declaration and encoding through the codec, so no path seals or opens by hand. Only the codec
// imports seal.ts's sealContent and openContent (and the rotation's code, which re-seals rows whose key it knows);
// a new path that needs sealing adds a kind to the codec instead (test/privacy/owner-data.test.ts checks the
// declaration names it).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CODEC = "src/store/crypto/row-codec.ts";
// The rotation re-seals under the new key what it opened with the old one (its own files: src/sql/rekey/ and each
// engine's hooks in src/sql/rekey-hooks/).
const REKEY = /^src\/sql\/rekey(?:-hooks)?\/[a-z-]+\.ts$/;
const FROM_SEAL = /(?:import|export)\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"[^"]*\/seal\.js"/g;

test("only the row codec (and the rotation) import sealContent or openContent", () => {
  const found: string[] = [];
  for (const path of sourceFiles(join(ROOT, "src"))) {
    const name = relative(ROOT, path).replaceAll("\\", "/");
    if (name === CODEC || name === "src/store/crypto/seal.ts" || REKEY.test(name)) continue;
    for (const match of readFileSync(path, "utf8").matchAll(FROM_SEAL)) {
      const names = match[1]!.split(",").map(
        (n) =>
          n
            .trim()
            .replace(/^type\s+/, "")
            .split(/\s+as\s+/)[0],
      );
      for (const n of names) if (n === "sealContent" || n === "openContent") found.push(`${name}: ${n}`);
    }
  }
  assert.deepEqual(found, [], "seal through src/store/crypto/row-codec.ts (encode/decode) instead");
});
