// Adds lockfile entries for platform-specific optional packages that this machine's npm registry does not
// carry (other OSes' binaries of biome, esbuild, rolldown, …). npm leaves them out of package-lock.json when it
// cannot resolve them, and `npm ci` then refuses the lockfile as out of sync. The stubs only name the version;
// npm skips them on this platform (or, failing to fetch one, treats it as the optional package it is).
// Run after every `npm install` that changes the lockfile: `node scripts/lock-optional-stubs.mjs`.
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;
let added = 0;

function resolvable(fromPath, name) {
  // Node's lookup: node_modules of the package itself, then of each ancestor.
  let base = fromPath;
  for (;;) {
    if (packages[`${base ? `${base}/` : ""}node_modules/${name}`]) return true;
    if (!base) return false;
    const index = base.lastIndexOf("/node_modules/");
    base = index < 0 ? "" : base.slice(0, index);
  }
}

for (const [path, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolvable(path, name)) continue;
    // Keys in npm's own order (dev before optional), or the next `npm install` rewrites the entry.
    packages[`node_modules/${name}`] = {
      version: spec.replace(/^[\^~=]/, ""),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    };
    added++;
  }
}
if (added > 0) {
  // npm orders the entries with an "en" collation (string_decoder before string-width); sorting any other way
  // makes the next `npm install` rewrite the lockfile and leaves a fresh clone dirty.
  const collate = new Intl.Collator("en").compare;
  lock.packages = Object.fromEntries(
    Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : collate(a, b))),
  );
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(`lock-optional-stubs: ${added} stub entr${added === 1 ? "y" : "ies"} added`);
