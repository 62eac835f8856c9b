/**
 * Makes a bench run the library as it ships: `node --import tsx --import ./bench/shipped.mjs bench/x.ts` loads
 * `dist/**.js` wherever a bench imports `src/**.ts`. Run through tsx, the sources are not the code users run: its
 * esbuild transform keeps function names by wrapping each nested function in a `__name()` call
 * (Object.defineProperty) every time it is created, which cost a scoped search 7-10 % of its p50 at 1,000
 * messages (a phrase, Node 20).
 * A compiled file older than its source is refused, so a stale build cannot be measured by mistake.
 */
import { register } from "node:module";

register("./shipped-hooks.mjs", import.meta.url);
