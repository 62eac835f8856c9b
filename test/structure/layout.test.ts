// The Postgres layout rule (docs/POSTGRES.md, "One layout object"): what a statement owes to the single-node or the
// Citus layout is a member of the store's layout (src/sql/engines/postgres/layout.ts, src/postgres/citus/layout.ts), so no other
// module of the backend names `distributed` in its code (comments aside): the option is read where the tables are
// named, where the store loads the Citus layout for it and where their catalog is matched to it on open.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BACKEND = join(ROOT, "src", "postgres");
/** The engine's ground floor, shared under src/sql/: it names the tables and checks the catalog on open. */
const GROUND = join(ROOT, "src", "sql", "engines", "postgres");

/**
 * Files that may name `distributed`: the option's declaration and parsing, the store's load of the Citus layout,
 * the open's catalog check, and the Citus folder (convert).
 */
const ALLOWED = (inside: string) =>
  [
    "postgres/schema.ts",
    "postgres/store.ts",
    "sql/engines/postgres/tables.ts",
    "sql/engines/postgres/layout-check.ts",
  ].includes(inside) || inside.startsWith("postgres/citus/");

/** The lines of `path` whose code (not comments or strings) names an identifier `distributed`. */
function namings(path: string): number[] {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) && node.text === "distributed")
      lines.push(source.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return lines;
}

test("src/postgres: only the layout's files name `distributed`; the rest ask the store's layout", () => {
  const found: string[] = [];
  for (const file of [...sourceFiles(BACKEND), ...sourceFiles(GROUND)]) {
    const inside = relative(join(ROOT, "src"), file).replaceAll("\\", "/");
    if (ALLOWED(inside)) continue;
    for (const line of namings(file)) found.push(`src/${inside}:${line}`);
  }
  assert.deepEqual(
    found,
    [],
    "take what differs from `t.layout` (src/sql/engines/postgres/layout.ts) instead",
  );
});

/** Every import of a citus/ module by a file outside it, as "file -> target" (dynamic ones marked `await import`). */
function citusImports(): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(BACKEND)) {
    const inside = relative(BACKEND, file).replaceAll("\\", "/");
    if (inside.startsWith("citus/")) continue;
    for (const target of imports(file, true)) {
      const to = relative(BACKEND, target).replaceAll("\\", "/");
      if (to.startsWith("citus/")) found.push(`${inside} -> ${to}`);
    }
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [specifier] = node.arguments;
        const to =
          specifier && ts.isStringLiteral(specifier)
            ? relative(BACKEND, join(dirname(file), specifier.text)).replaceAll("\\", "/")
            : "(not a literal)";
        if (to.startsWith("citus/") || to === "(not a literal)")
          found.push(`${inside} -> await import ${to}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort();
}

test("src/postgres: outside citus/, only the store imports a citus/ module, lazily (a single-node store loads none)", () => {
  assert.deepEqual(
    citusImports(),
    ["store.ts -> await import citus/layout.js"],
    "ask the Citus steps of `t.layout` (citus-steps.ts) or a layout member instead",
  );
});
