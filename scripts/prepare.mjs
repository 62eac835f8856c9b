// npm's `prepare` hook: builds dist/ from src/ whenever npm installs this package from a folder or a git URL, packs
// it, publishes it, or installs a checkout (`npm install`/`npm ci`). dist/ is not committed, so without this a
// package installed from source has no dist/ and fails later with an ERR_MODULE_NOT_FOUND that does not say why.
// When the build cannot run (TypeScript, a devDependency, is missing) this fails now, saying what to do.
// npm runs it again on every later `npm install` of an app that depends on the folder: a build whose inputs (the
// sources, the build settings, package.json, TypeScript's version) have not changed since is kept, not redone.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "dist", "index.js");

let tsc;
try {
  tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
} catch {
  console.error(
    `agent-session: cannot build dist/ in ${root}: TypeScript (a devDependency) is not installed there.\n` +
      "Run `npm install` in that folder first (it installs TypeScript and builds), or install a packed tarball " +
      "(`npm pack` there, then `npm install ./agent-session-<version>.tgz`).",
  );
  process.exit(1);
}

const stampFile = join(root, "dist", ".build-inputs");
const stamp = buildInputs();
if (
  existsSync(entry) &&
  existsSync(stampFile) &&
  readFileSync(stampFile, "utf8") === stamp &&
  !rebuiltSince()
) {
  // stderr: `npm pack --json` reads this script's stdout as part of its JSON.
  console.error("agent-session: dist/ was built from these sources already; kept");
  process.exit(0);
}

// A clean build: files of since-removed sources must not linger in dist/ and ship.
rmSync(join(root, "dist"), { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
  cwd: root,
  stdio: "inherit",
});
if (result.status !== 0 || !existsSync(entry)) {
  console.error(
    `agent-session: the build (tsc -p tsconfig.build.json) failed in ${root}: dist/ is incomplete.`,
  );
  process.exit(result.status || 1);
}
writeFileSync(stampFile, stamp);

/** A hash of everything the build reads: src/, the tsconfig files, package.json and TypeScript's version. */
function buildInputs() {
  const hash = createHash("sha256");
  const typescript = JSON.parse(readFileSync(join(dirname(tsc), "..", "package.json"), "utf8")).version;
  hash.update(`typescript ${typescript}\n`);
  const files = ["package.json", "tsconfig.json", "tsconfig.build.json"];
  for (const entry of readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files.push(join(entry.parentPath, entry.name).slice(root.length + 1));
  }
  for (const file of files.sort()) {
    hash.update(`${file}\n`);
    if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)));
  }
  return hash.digest("hex");
}

/** Whether anything in dist/ was written after the stamp, e.g. by `npm run build` from other sources. */
function rebuiltSince() {
  const stamped = statSync(stampFile).mtimeMs;
  const dist = join(root, "dist");
  return readdirSync(dist, { recursive: true, withFileTypes: true }).some(
    (entry) => entry.isFile() && statSync(join(entry.parentPath, entry.name)).mtimeMs > stamped,
  );
}
