// Runs the code under test on the previous AI SDK major: with AGENT_SESSION_AI=6, `ai`, `@ai-sdk/react` and
// `@ai-sdk/anthropic` imported from outside node_modules resolve to the devDependency aliases of their ai@6 releases
// (`ai-6`, `ai-sdk-react-3`, `ai-sdk-anthropic-3`; package.json), while the packages themselves keep resolving their
// own dependencies. Without the variable (or with 7) nothing is redirected: the devDependencies are ai@7.
// scripts/test.mjs puts this file in NODE_OPTIONS (`--import`), so processes the tests spawn get it too; one file:
// `AGENT_SESSION_AI=6 node --import tsx --import ./test/helpers/ai-major.mjs --test test/ai-sdk/memory.test.ts`.
import { register } from "node:module";
import { aiAliases } from "./ai-major-aliases.mjs";

if (Object.keys(aiAliases()).length > 0) register("./ai-major-hooks.mjs", import.meta.url);
