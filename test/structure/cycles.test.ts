// No import cycles between source modules, neither at run time (value imports) nor in the types (a component
// typing its owning store is erased at run time, yet a reader still cannot understand one file without the
// other). A cycle makes load order matter and hides which module owns what: move what both sides share into a
// module of its own, or let the part depend on a narrow interface instead of its owner's class.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");
const KNOWN: string[] = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The relative modules `path` imports: for their values only, or with `types` also the type-only imports. */
function imports(path: string, types: boolean): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false);
  const targets: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly && !types) continue;
      const bindings = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((element) => element.isTypeOnly);
      if (onlyTypes && !types) continue;
      specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
      const clause = statement.exportClause;
      const onlyTypes =
        statement.isTypeOnly ||
        (clause !== undefined &&
          ts.isNamedExports(clause) &&
          clause.elements.every((element) => element.isTypeOnly));
      if (onlyTypes && !types) continue;
      specifier = statement.moduleSpecifier;
    }
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) continue;
    const target = resolve(dirname(path), specifier.text.replace(/\.js$/, ".ts"));
    if (existsSync(target)) targets.push(target);
  }
  return targets;
}

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
