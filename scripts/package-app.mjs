// Installs an app as a user would, offline: a lockfile built from this checkout's own (every package at the version
// CI tested, from npm's cache that this checkout's `npm ci` filled), the packed tarball, and `npm install`. Shared by
// scripts/check-package.mjs (apps on Node 20 and on either AI SDK major) and scripts/check-package-doors.mjs (the
// Mastra and eve apps on Node 24).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The checkout's lockfile entry at a path, which must exist (the app installs exactly what CI tested). */
/**
 * The package supports every Node its `engines` names, so installing it (with its own dependencies) must print no
 * EBADENGINE warning there. A peer the app chose may need a newer Node: `openai` 7 (through the OpenAI Agents
 * SDK) declares Node >= 22, and that is the app's choice, said in docs/OPENAI.md.
 */
function refuseEngineWarnings(said) {
  // ai@7 and its packages declare Node >= 22 (the app on ai@7 chose it; docs/AI-SDK.md).
  const peersNeedingNewerNode = new Set([
    "openai",
    "ai",
    "@ai-sdk/gateway",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
  ]);
  const named = [...said.matchAll(/EBADENGINE\s+package: '(@?[^@']+)@/g)].map((m) => m[1]);
  const ours = named.filter((name) => !peersNeedingNewerNode.has(name));
  if (ours.length > 0)
    throw new Error(
      `installing the package warned of engines on Node ${process.version}: ${ours.join(", ")}`,
    );
  console.log(`no engine warning from the package or its dependencies on Node ${process.version}`);
}

function lockEntry(path) {
  const entry = lock.packages[path];
  if (entry === undefined) throw new Error(`package-lock.json has no ${path}`);
  return entry;
}

/**
 * A lockfile for the app: the tarball, plus the checkout's own entries for everything it and the peers need, at
 * the same paths (so the same hoisting), found by Node's resolution (nearest node_modules up the tree). `sources`
 * puts a package the checkout has under an alias at the app's path: `{ "node_modules/ai": "node_modules/ai-6" }`
 * (with the alias's own nested dependencies under it).
 */
function appLock(manifest, tarball, integrity, sources) {
  const packages = { "": manifest };
  packages["node_modules/agent-session"] = {
    version: pkg.version,
    resolved: `file:${tarball}`,
    integrity,
    dependencies: pkg.dependencies,
  };
  const rootOf = (name) => sources[`node_modules/${name}`] ?? resolveIn("", name);
  const appPath = (path) => {
    for (const [at, from] of Object.entries(sources)) {
      if (path === from || path.startsWith(`${from}/`)) return at + path.slice(from.length);
    }
    return path;
  };
  const queue = Object.keys(manifest.dependencies).map(rootOf);
  queue.push(...Object.keys(pkg.dependencies).map(rootOf));
  const seen = new Set();
  while (queue.length > 0) {
    const path = queue.pop();
    if (path === undefined || path === "node_modules/agent-session" || seen.has(path)) continue;
    seen.add(path);
    const { dev: _d, devOptional: _o, peer: _p, name: _n, ...entry } = lockEntry(path);
    // npm leaves `resolved` out of some entries (@workflow/serde, through ai@7); offline, it needs the address.
    if (entry.resolved === undefined && entry.integrity !== undefined)
      entry.resolved = registryUrl(path, entry);
    packages[appPath(path)] = entry;
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const needs = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers[name]?.optional),
    ];
    // What resolves to the root resolves to the app's root copy (the alias, where one stands in).
    for (const name of needs) {
      const found = resolveIn(path, name);
      queue.push(found === `node_modules/${name}` ? rootOf(name) : found);
    }
  }
  return { name: manifest.name, lockfileVersion: 3, requires: true, packages };
}

/** The npm registry's address of the tarball of the lockfile entry at `path`. */
function registryUrl(path, entry) {
  const name =
    lock.packages[path]?.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  return `https://registry.npmjs.org/${name}/-/${name.split("/").pop()}-${entry.version}.tgz`;
}

/**
 * Installs an app that depends on the tarball and the packages `names`, at the checkout's versions (`sources`: see
 * appLock), into `dir`, offline; `overrides` go into its package.json as the app's own.
 */
export function installApp(dir, tarball, integrity, sources, names, overrides = undefined) {
  mkdirSync(dir);
  const appDeps = { "agent-session": `file:${relative(dir, tarball)}` };
  for (const name of names)
    appDeps[name] = lockEntry(sources[`node_modules/${name}`] ?? `node_modules/${name}`).version;
  const manifest = { name: "app", private: true, type: "module", dependencies: appDeps };
  if (overrides !== undefined) manifest.overrides = overrides;
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  writeFileSync(
    join(dir, "package-lock.json"),
    JSON.stringify(appLock(manifest, tarball, integrity, sources), null, 2),
  );
  const installed = spawnSync(npm, ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: dir,
    encoding: "utf8",
  });
  process.stderr.write(installed.stderr);
  if (installed.status !== 0) throw new Error(`the app's npm install failed (exit ${installed.status})`);
  refuseEngineWarnings(installed.stderr);
}

/** The lockfile path Node would load `name` from when required by the package at `from`. */
function resolveIn(from, name) {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
    const path = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (lock.packages[path] !== undefined) return path;
    if (dir === "") return undefined;
  }
}

/**
 * An app's source that imports `entries`, then `doors`, and prints `{ before, after }`: the packages whose names match
 * `packages` (a regular expression's source, its first group the name) loaded by then. Every ES module load passes a
 * resolve hook and CommonJS ones land in require's cache: both are read.
 */
export function loadRecordApp(entries, doors, packages) {
  const hook = `import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(log, resolved.url + "\\n");
  return resolved;
}`;
  const imports = (names) => names.map((e) => `await import(${JSON.stringify(e)});`).join("\n");
  return `import { readFileSync, writeFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { fileURLToPath } from "node:url";

const log = fileURLToPath(new URL("./loaded.txt", import.meta.url));
writeFileSync(log, "");
register(\`data:text/javascript,\${encodeURIComponent(${JSON.stringify(hook)})}\`, { data: { log } });
const cache = createRequire(import.meta.url).cache;
const pattern = new RegExp(${JSON.stringify(packages)});
const loaded = () => {
  const urls = [...readFileSync(log, "utf8").split("\\n"), ...Object.keys(cache)];
  return [...new Set(urls.map((at) => pattern.exec(at)?.[1]).filter(Boolean))].sort();
};
${imports(entries)}
const before = loaded();
${imports(doors)}
console.log(JSON.stringify({ before, after: loaded() }));
`;
}
