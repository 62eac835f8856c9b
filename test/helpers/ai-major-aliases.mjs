/** The AI SDK packages of each major the tests run on, by the name the code imports: the default major is none. */
const ALIASES = {
  6: { ai: "ai-6", "@ai-sdk/react": "ai-sdk-react-3", "@ai-sdk/anthropic": "ai-sdk-anthropic-3" },
  7: {},
};

/** The packages AGENT_SESSION_AI redirects (also esbuild's `alias` for the chat page's bundle). */
export function aiAliases(major = process.env.AGENT_SESSION_AI ?? "7") {
  const aliases = ALIASES[major];
  if (aliases === undefined)
    throw new Error(
      `AGENT_SESSION_AI=${major}: the tests run on AI SDK ${Object.keys(ALIASES).join(" or ")}`,
    );
  return aliases;
}
