/**
 * Resolve hook of bench/shipped.mjs: a module under a checkout's src/ resolves to its compiled twin under that
 * checkout's dist/ (this checkout's, or another's that a bench loads, such as everyday-ab's BASE).
 */
import { existsSync, statSync } from "node:fs";

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith("file:")) return resolved;
  if (resolved.url.endsWith(".js")) return checkedCompiled(resolved);
  if (!resolved.url.endsWith(".ts")) return resolved;
  // The checkout is the deepest folder above a `src/` that holds tsconfig.build.json (its path may hold a `src/`).
  let at = resolved.url.lastIndexOf("/src/");
  while (at >= 0 && !existsSync(new URL(`${resolved.url.slice(0, at + 1)}tsconfig.build.json`))) {
    at = resolved.url.lastIndexOf("/src/", at - 1);
  }
  if (at < 0) return resolved;
  const root = resolved.url.slice(0, at + 1);
  const compiled = `${root}dist/${resolved.url.slice(at + "/src/".length, -".ts".length)}.js`;
  if (!existsSync(new URL(compiled))) {
    throw new Error(`bench/shipped.mjs: ${compiled} is missing; run npm run build first`);
  }
  if (statSync(new URL(compiled)).mtimeMs < statSync(new URL(resolved.url)).mtimeMs) {
    throw new Error(`bench/shipped.mjs: ${compiled} is older than its source; run npm run build first`);
  }
  return { url: compiled, format: "module", shortCircuit: true };
}

/**
 * A compiled module that another compiled one imports (dist/ importing dist/), refused like the bench's own imports
 * when its source under src/ is newer: a stale inner file would otherwise be measured unnoticed.
 */
function checkedCompiled(resolved) {
  const at = resolved.url.lastIndexOf("/dist/");
  if (at < 0 || !existsSync(new URL(`${resolved.url.slice(0, at + 1)}tsconfig.build.json`))) return resolved;
  const source = `${resolved.url.slice(0, at + 1)}src/${resolved.url.slice(at + "/dist/".length, -".js".length)}.ts`;
  if (
    existsSync(new URL(source)) &&
    statSync(new URL(resolved.url)).mtimeMs < statSync(new URL(source)).mtimeMs
  ) {
    throw new Error(`bench/shipped.mjs: ${resolved.url} is older than its source; run npm run build first`);
  }
  return resolved;
}
