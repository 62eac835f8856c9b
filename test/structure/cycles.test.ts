// No import cycles between source modules, neither at run time (value imports) nor in the types (a component
// typing its owning store is erased at run time, yet a reader still cannot understand one file without the
// other). A cycle makes load order matter and hides which module owns what: move what both sides share into a
// module of its own, or let the part depend on a narrow interface instead of its owner's class.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");
const KNOWN: string[] = [];

function cycles(types: boolean): string[] {
  const name = (path: string) => relative(ROOT, path).replaceAll("\\", "/");
  const graph = new Map(sourceFiles(SRC).map((path) => [path, imports(path, types)]));
  const found = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") {
        const loop = stack.slice(stack.indexOf(next)).map(name);
        // One spelling per cycle: start at its smallest module.
        const first = loop.indexOf([...loop].sort()[0]!);
        found.add([...loop.slice(first), ...loop.slice(0, first)].join(" -> "));
      } else if (!state.has(next)) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return [...found].sort();
}

test("source modules import each other's values without cycles", () => {
  assert.deepEqual(cycles(false), [], "move what the modules of a cycle share into a module of its own");
});

test("source modules import each other's types without cycles", () => {
  assert.deepEqual(
    cycles(true).filter((cycle) => !KNOWN.includes(cycle)),
    [],
    "let the part depend on a narrow interface, or move the shared types into a module of their own",
  );
});
