// The Postgres layout rule (docs/POSTGRES.md, "One layout object"): what a statement owes to the single-node or the
// Citus layout is a member of the store's layout (src/postgres/connection/layout.ts, citus/layout.ts), so no other
// module of the backend names `distributed` in its code (comments aside): the option is read where the tables are
// named and where their catalog is matched to it on open.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BACKEND = join(ROOT, "src", "postgres");

/** Files that may name `distributed`: the option's declaration and parsing, and the Citus folder (open, convert). */
const ALLOWED = (inside: string) =>
  inside === "schema.ts" || inside === "connection/tables.ts" || inside.startsWith("citus/");

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
  for (const file of sourceFiles(BACKEND)) {
    const inside = relative(BACKEND, file).replaceAll("\\", "/");
    if (ALLOWED(inside)) continue;
    for (const line of namings(file)) found.push(`src/postgres/${inside}:${line}`);
  }
  assert.deepEqual(found, [], "take what differs from `t.layout` (connection/layout.ts) instead");
});
