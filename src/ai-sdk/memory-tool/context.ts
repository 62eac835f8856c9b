/**
 * The memory directory as a read-only context block, for an app that wants the files in the (frozen) system
 * prompt as well as behind the tool: `session.withContext("memories", { provider: memoryFilesContext(...) })`.
 */

import type { ContextProvider } from "../../context/types.js";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import { SessionError } from "../../errors.js";
import { utf8Length } from "../../runtime/bytes.js";
import { parseInput } from "../../schema/parse.js";
import { parseFiles } from "./directory.js";
import { numbered } from "./format.js";
import { memoryFilesContextSchema } from "./options.js";
import { type MemoryScope, memoryToolKey } from "./tool.js";

/** Options of {@link memoryFilesContext}. */
export type MemoryFilesContextOptions = MemoryScope & {
  store: SessionStore;
  /** The most UTF-8 bytes of file text the block shows (default 20,000); the files past it are named, not shown. */
  maxBytes?: number;
};

/**
 * A read-only context provider rendering the memory directory: each file under its path, its lines numbered as
 * `view` numbers them (so file text can never pass for another file's heading). Files past `maxBytes` are listed
 * by path with a note that the tool reads them; an empty directory renders nothing.
 */
export function memoryFilesContext(options: MemoryFilesContextOptions): ContextProvider {
  const key = memoryToolKey(options);
  const maxBytes = parseInput(memoryFilesContextSchema, options).maxBytes ?? 20_000;
  const { store } = options;
  if (!hasContextStorage(store)) {
    throw new SessionError(
      "UNSUPPORTED",
      "memoryFilesContext needs a store with context blocks (store.blocks)",
      {
        issues: [{ path: "store", rule: "invalid" }],
      },
    );
  }
  return {
    get: async () => {
      const files = parseFiles(await store.blocks.getBlock(key), key);
      if (files.size === 0) return null;
      const shown: string[] = [];
      const left: string[] = [];
      let used = 0;
      for (const path of [...files.keys()].sort()) {
        const content = files.get(path) ?? "";
        const bytes = utf8Length(content);
        if (left.length === 0 && used + bytes <= maxBytes) {
          used += bytes;
          const lines = content.split("\n");
          shown.push(`${path}\n${numbered(lines, 1, lines.length)}`);
        } else {
          left.push(path);
        }
      }
      if (left.length > 0) {
        shown.push(
          `[${left.length} more file(s) not shown here; read them with the memory tool: ${left.join(", ")}]`,
        );
      }
      return shown.join("\n\n");
    },
  };
}
