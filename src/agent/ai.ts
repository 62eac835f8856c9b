import { MissingDependencyError } from "../errors.js";

/** The `ai` package's runtime API. */
export type AiModule = typeof import("ai");

let loading: Promise<AiModule> | undefined;

/** Loads `ai` on first use: it is an optional peer, and the storages in this entry point work without it. */
export function loadAi(): Promise<AiModule> {
  loading ??= import("ai").catch((error: unknown) => {
    loading = undefined;
    throw new MissingDependencyError("ai", "agent-session/agent sessions", error);
  });
  return loading;
}
