// Reports when npm's `latest` of a peer dependency, or of TypeScript, falls outside what this package supports, so
// a new major (as AI SDK 7 and TypeScript 7 were) is seen the day it ships rather than when an app cannot install
// or type-check us. A peer is inside when its latest satisfies the peer range; TypeScript when its latest major is
// one the package check type-checks an app with (the `typescript` devDependency and its `typescript-<major>`
// aliases). Exits 1 when one is outside (CI prints a warning and goes on: upstream's release is not our breakage),
// 2 when the registry cannot be asked. `node scripts/peer-majors.mjs`.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** [a, b, c] of a plain version (pre-release tags dropped). */
function parts(version) {
  return version
    .replace(/^[v=]/, "")
    .split("-")[0]
    .split(".")
    .map((n) => Number(n) || 0);
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** Whether `version` satisfies `range` in the forms our manifest uses: `^x.y.z`, `>=x.y.z`, joined by `||`. */
export function satisfies(version, range) {
  const v = parts(version);
  return range.split("||").some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .every((comparator) => {
        if (comparator.startsWith("^")) {
          const base = parts(comparator.slice(1));
          // ^0.y.z allows only 0.y.*; ^x.y.z (x > 0) every x.*.* from x.y.z.
          const same = base[0] === 0 ? v[0] === 0 && v[1] === base[1] : v[0] === base[0];
          return same && compare(v, base) >= 0;
        }
        if (comparator.startsWith(">=")) return compare(v, parts(comparator.slice(2))) >= 0;
        throw new Error(`peer-majors: cannot read the range "${range}" (only ^ and >= forms)`);
      }),
  );
}

async function latest(name) {
  const { stdout } = await promisify(execFile)(npm, ["view", name, "dist-tags.latest", "--json"]);
  return JSON.parse(stdout);
}

const dev = pkg.devDependencies ?? {};
const typescriptMajors = Object.entries(dev)
  .filter(([name]) => name === "typescript" || /^typescript-\d+$/.test(name))
  .map(([, spec]) => parts(spec.replace(/^npm:typescript@/, ""))[0]);
const checks = [
  ...Object.entries(pkg.peerDependencies ?? {}).map(([name, range]) => ({
    name,
    supported: range,
    inside: (version) => satisfies(version, range),
  })),
  {
    name: "typescript",
    supported: typescriptMajors.map((major) => `${major}.x`).join(", "),
    inside: (version) => typescriptMajors.includes(parts(version)[0]),
  },
];

let versions;
try {
  versions = await Promise.all(checks.map((check) => latest(check.name)));
} catch (error) {
  console.error(`peer-majors: could not ask the registry: ${error instanceof Error ? error.message : error}`);
  process.exit(2);
}
let outside = 0;
checks.forEach((check, i) => {
  const version = versions[i];
  const ok = check.inside(version);
  if (!ok) outside++;
  console.log(`${ok ? "ok     " : "OUTSIDE"} ${check.name}: latest ${version}, supported ${check.supported}`);
});
if (outside > 0) {
  console.error(
    `peer-majors: ${outside} latest release(s) outside what agent-session supports: widen the range and test it`,
  );
  process.exit(1);
}
