// The resolve hook test/helpers/ai-major.mjs registers (it runs on Node's hooks thread).
import { aiAliases } from "./ai-major-aliases.mjs";

const aliases = aiAliases();

/** `ai`, `ai/test`, `@ai-sdk/react`… imported by our code go to the alias; a package's own imports are left alone. */
export async function resolve(specifier, context, nextResolve) {
  const fromPackage = context.parentURL?.includes("/node_modules/") ?? false;
  if (!fromPackage) {
    for (const [name, alias] of Object.entries(aliases)) {
      if (specifier === name || specifier.startsWith(`${name}/`))
        return nextResolve(alias + specifier.slice(name.length), context);
    }
  }
  return nextResolve(specifier, context);
}
