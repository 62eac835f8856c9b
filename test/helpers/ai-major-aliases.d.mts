/** The packages AGENT_SESSION_AI redirects, by the name the code imports (also esbuild's `alias` for a page). */
export function aiAliases(major?: string): Record<string, string>;
