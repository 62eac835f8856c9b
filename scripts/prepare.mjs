// npm's `prepare` hook: builds dist/ from src/ whenever npm installs this package from a folder or a git URL, packs
// it, publishes it, or installs a checkout (`npm install`/`npm ci`). dist/ is not committed, so without this a
// package installed from source has no dist/ and fails later with an ERR_MODULE_NOT_FOUND that does not say why.
// When the build cannot run (TypeScript, a devDependency, is missing) this fails now, saying what to do.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
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
