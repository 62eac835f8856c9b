import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { errorMessage } from "../errors.js";
import { CliError } from "./errors.js";

/**
 * What a JavaScript module the user names exports as `name`, else as its default export (undefined when neither):
 * resolved from the current directory and loaded with a dynamic import. `what` names it in the error.
 */
export async function moduleExport(path: string, name: string, what: string): Promise<unknown> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(`cannot load the ${what} module ${path}: ${errorMessage(error)}`, "INVALID_ARGUMENT");
  }
  return module[name] ?? module.default;
}
