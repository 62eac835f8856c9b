/**
 * Everything agent-session loads that is not plain JavaScript goes through here, on first use, so importing the
 * library loads no Node.js built-in and no optional package: the core runs in a Worker / Durable Object without
 * `nodejs_compat` (docs/SQLITE.md, "Runs in a Durable Object").
 */
import { MissingDependencyError, SessionError } from "../errors.js";

type BuiltinLookup = { getBuiltinModule?: (id: string) => unknown };

/**
 * A Node.js built-in module, loaded synchronously on demand (`process.getBuiltinModule`, Node >= 20.16), or
 * undefined where there is none (a Worker without `nodejs_compat`, or a built-in this Node lacks).
 */
export function nodeBuiltin<T>(id: string): T | undefined {
  const lookup = (globalThis as { process?: BuiltinLookup }).process?.getBuiltinModule;
  if (typeof lookup !== "function") return undefined;
  try {
    return (lookup.call((globalThis as { process?: BuiltinLookup }).process, id) ?? undefined) as
      | T
      | undefined;
  } catch {
    // An unknown or flag-gated built-in (node:sqlite before 22.13) is simply absent.
    return undefined;
  }
}

/** Node's `require`, for CommonJS packages that must load synchronously (better-sqlite3); `UNSUPPORTED` off Node. */
export function nodeRequire(feature: string): (id: string) => unknown {
  const module = nodeBuiltin<typeof import("node:module")>("node:module");
  if (!module) {
    throw new SessionError(
      "UNSUPPORTED",
      `${feature} needs Node.js; in a Worker or Durable Object pass a sql-tag object such as ctx.storage instead`,
    );
  }
  return module.createRequire(import.meta.url);
}

/**
 * Imports an optional package on first use: a `MissingDependencyError` ("npm install X") when it cannot load.
 * By default the specifier is a variable, so bundlers (wrangler/esbuild) leave a package the app never uses out;
 * pass `load` (`() => import("pg")`) where a bundler should include it.
 */
export async function importOptional<T>(
  dependency: string,
  feature: string,
  load: () => Promise<unknown> = () => import(/* @vite-ignore */ dependency),
): Promise<T> {
  try {
    return (await load()) as T;
  } catch (error) {
    throw new MissingDependencyError(dependency, feature, error);
  }
}
