import { importOptional } from "../runtime/load.js";

/** The `ai` package's runtime API. */
export type AiModule = typeof import("ai");

let loading: Promise<AiModule> | undefined;

/** Loads `ai` on first use: it is an optional peer, and the storages in this entry point work without it. */
export function loadAi(): Promise<AiModule> {
  // A literal import, so a bundler includes `ai` where the app uses agent sessions.
  loading ??= importOptional<AiModule>("ai", "agent-session/agent sessions", () => import("ai")).catch(
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
