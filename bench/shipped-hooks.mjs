/**
 * Resolve hook of bench/shipped.mjs: a module under a checkout's src/ resolves to its compiled twin under that
 * checkout's dist/ (this checkout's, or another's that a bench loads, such as everyday-ab's BASE).
 */
import { existsSync, statSync } from "node:fs";

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const at = resolved.url.indexOf("/src/");
  if (!resolved.url.startsWith("file:") || at < 0 || !resolved.url.endsWith(".ts")) return resolved;
  const root = resolved.url.slice(0, at + 1);
  if (!existsSync(new URL(`${root}tsconfig.build.json`))) return resolved;
  const compiled = `${root}dist/${resolved.url.slice(at + "/src/".length, -".ts".length)}.js`;
  if (!existsSync(new URL(compiled))) {
    throw new Error(`bench/shipped.mjs: ${compiled} is missing; run npm run build first`);
  }
  if (statSync(new URL(compiled)).mtimeMs < statSync(new URL(resolved.url)).mtimeMs) {
    throw new Error(`bench/shipped.mjs: ${compiled} is older than its source; run npm run build first`);
  }
  return { url: compiled, format: "module", shortCircuit: true };
}
