// Adds lockfile entries for platform-specific optional packages that this machine's npm registry does not
// carry (other OSes' binaries of biome, esbuild, rolldown, …). npm leaves them out of package-lock.json when it
// cannot resolve them, and `npm ci` then refuses the lockfile as out of sync. A stub names the version and, when
// the registry answers for it, the platforms it is for (os, cpu, libc): without them npm ci installs every
// platform's binary (1.1 GB of workerd and biome that cannot run here); with them it skips the others. A stub the
// registry does not know stays bare, and npm, failing to fetch it, treats it as the optional package it is.
// Run after every `npm install` that changes the lockfile: `node scripts/lock-optional-stubs.mjs`.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const packages = lock.packages;
let added = 0;
let narrowed = 0;

/** The platforms a package version is built for, as the registry states them (none when it does not answer). */
function platforms(name, version) {
  try {
    const out = execFileSync("npm", ["view", `${name}@${version}`, "os", "cpu", "libc", "--json"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 30_000,
    });
    const fields = out.trim() ? JSON.parse(out) : {};
    return Object.fromEntries(
      ["cpu", "libc", "os"].filter((key) => fields[key]).map((key) => [key, fields[key]]),
    );
  } catch {
    return {}; // unknown to the registry (or offline): a bare stub, as before
  }
}

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
// A stub without its platforms (added before they were recorded, or while the registry was offline) gets them now.
for (const [path, entry] of Object.entries(packages)) {
  if (!entry.optional || entry.resolved || entry.integrity || entry.os || entry.cpu) continue;
  const found = platforms(
    path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length),
    entry.version,
  );
  if (Object.keys(found).length === 0) continue;
  // npm's own key order (version, cpu, dev, libc, optional, os), or the next `npm install` rewrites the entry.
  const { version, dev, optional } = entry;
  packages[path] = {
    version,
    ...(found.cpu ? { cpu: found.cpu } : {}),
    ...(dev ? { dev } : {}),
    ...(found.libc ? { libc: found.libc } : {}),
    optional,
    ...(found.os ? { os: found.os } : {}),
  };
  narrowed++;
}
if (added > 0 || narrowed > 0) {
  // npm orders the entries with an "en" collation (string_decoder before string-width); sorting any other way
  // makes the next `npm install` rewrite the lockfile and leaves a fresh clone dirty.
  const collate = new Intl.Collator("en").compare;
  lock.packages = Object.fromEntries(
    Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : collate(a, b))),
  );
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(
  `lock-optional-stubs: ${added} stub entr${added === 1 ? "y" : "ies"} added, ${narrowed} given their platforms`,
);
