import * as ai from "ai";

/** The AI SDK major the tests run on: 7 (the devDependency), or 6 when AGENT_SESSION_AI=6 (./ai-major.mjs). */
export const AI_MAJOR: 6 | 7 = "isStepCount" in ai ? 7 : 6;
