// The layer rule of docs/ARCHITECTURE.md, checked: nothing above the stores writes SQL. Only src/sqlite/,
// src/postgres/ and src/sql/ (the engines' ground and the storage concerns written once) import a database driver
// or hold SQL in a string; the rest of the library talks to stores.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { circlesOf } from "./fixtures/circles.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");
const BACKENDS = ["src/sqlite/", "src/postgres/"];
const ALLOWED = ["src/sql/"];
const DRIVERS = new Set([
  "better-sqlite3",
  "better-sqlite3-node22",
  "node:sqlite",
  "pg",
  "@electric-sql/pglite",
]);
// Statement shapes, upper case as this codebase writes SQL, so prose ("select from the list") does not count.
const SQL =
  /\b(SELECT\b[\s\S]*\bFROM|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|SCHEMA)|DROP\s+(TABLE|INDEX|SCHEMA)|ALTER\s+TABLE|BEGIN\s+IMMEDIATE)/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

interface Finding {
  file: string;
  line: number;
  what: string;
}

function scan(path: string): Finding[] {
  const file = relative(ROOT, path).replaceAll("\\", "/");
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const findings: Finding[] = [];
  const at = (node: ts.Node, what: string) =>
    findings.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, what });
  const visit = (node: ts.Node): void => {
    const specifier =
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier
        ? node.moduleSpecifier
        : ts.isCallExpression(node) &&
            (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
              (ts.isIdentifier(node.expression) && node.expression.text === "require"))
          ? node.arguments[0]
          : undefined;
    const typeOnly = ts.isImportDeclaration(node) && node.importClause?.isTypeOnly === true;
    if (specifier && ts.isStringLiteralLike(specifier) && DRIVERS.has(specifier.text) && !typeOnly) {
      at(node, `imports ${specifier.text}`);
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (SQL.test(node.text)) at(node, `SQL: ${node.text.slice(0, 60)}`);
    } else if (ts.isTemplateExpression(node)) {
      const text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(" x ");
      if (SQL.test(text)) at(node, `SQL: ${text.slice(0, 60)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

test("only src/sqlite, src/postgres and src/sql import a database driver or write SQL", () => {
  const outside = sourceFiles(SRC).filter((path) => {
    const file = relative(ROOT, path).replaceAll("\\", "/");
    return ![...BACKENDS, ...ALLOWED].some((prefix) => file.startsWith(prefix));
  });
  assert.ok(outside.length > 50, "the scan found the source files");
  const findings = outside.flatMap(scan);
  assert.deepEqual(
    findings.map((f) => `${f.file}:${f.line} ${f.what}`),
    [],
    "move the statement into a store in src/sqlite or src/postgres, or a concern of src/sql, and call it from here",
  );
});

test("the scan recognises SQL and driver imports", () => {
  const probe = join(ROOT, "test/structure/fixtures/writes-sql.ts");
  assert.deepEqual(
    scan(probe).map((f) => f.what.split(": ")[0]),
    ["imports pg", "imports node:sqlite", "SQL", "SQL"],
  );
});

// The layers the backends build on (the contract, the query language, context blocks) import no backend: each
// backend's reference-named classes live in its own reference.ts, over the generic ones.
test("src/store, src/search and src/context import neither src/sqlite nor src/postgres", () => {
  const backend = /^\.\.\/(sqlite|postgres)\//;
  const findings = ["src/store", "src/search", "src/context"]
    .flatMap((dir) => sourceFiles(join(ROOT, dir)))
    .flatMap((path) => {
      const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false);
      return source.statements.flatMap((statement) => {
        const specifier =
          (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
          statement.moduleSpecifier;
        return specifier && ts.isStringLiteral(specifier) && backend.test(specifier.text)
          ? [`${relative(ROOT, path).replaceAll("\\", "/")} imports ${specifier.text}`]
          : [];
      });
    });
  assert.deepEqual(findings, [], "hand the backend in from src/sqlite or src/postgres instead");
});

/** A module's room: its folder under src/ (`store` for src/store/feed/feed.ts), or the file for one at the root. */
function room(path: string): string {
  return relative(SRC, path).replaceAll("\\", "/").split("/")[0]!;
}

/** Room → the rooms it imports from (relative imports, types included: a reader follows those too). */
function roomGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const path of sourceFiles(SRC)) {
    const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false);
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
      if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(".")) continue;
      const target = resolve(dirname(path), specifier.text.replace(/\.js$/, ".ts"));
      if (!existsSync(target)) continue;
      const [from, to] = [room(path), room(target)];
      if (from === to) continue;
      const edges = graph.get(from) ?? new Set<string>();
      edges.add(to);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** The arrows inside a circle of rooms, as `from -> to`. */
function arrowsBackUp(graph: Map<string, Set<string>>): string[] {
  return circlesOf(graph)
    .flatMap((circle) =>
      circle.flatMap((from) =>
        [...(graph.get(from) ?? [])].filter((to) => circle.includes(to)).map((to) => `${from} -> ${to}`),
      ),
    )
    .sort();
}

// The folders stack in floors (ARCHITECTURE.md, Folders as floors): an import from a lower floor up to a higher one makes
// a circle of rooms, so neither can be read without the other.
const KNOWN_BACK_UP: string[] = [];

test("no import runs back up the layers: the folders of src/ import each other without a circle", () => {
  assert.deepEqual(arrowsBackUp(roomGraph()), KNOWN_BACK_UP);
});

// The storage contract is the lowest floor: every room may build on it, and it builds on nothing, so a backend's
// author reads it alone.
test("src/contract imports no other room of src/ and no package", () => {
  const graph = roomGraph();
  assert.deepEqual(
    [...(graph.get("contract") ?? [])],
    [],
    "the contract names shapes only: move the code out",
  );
  const packages = sourceFiles(join(SRC, "contract")).flatMap((path) => {
    const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, false);
    return source.statements.flatMap((statement) => {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
      return specifier && ts.isStringLiteral(specifier) && !specifier.text.startsWith(".")
        ? [`${relative(ROOT, path)} imports ${specifier.text}`]
        : [];
    });
  });
  assert.deepEqual(packages, []);
  assert.ok(
    [...graph.values()].filter((to) => to.has("contract")).length > 5,
    "the rooms build on the contract",
  );
});

test("the room scan finds a circle of folders", () => {
  const graph = new Map([
    ["a", new Set(["b"])],
    ["b", new Set(["c"])],
    ["c", new Set(["a", "d"])],
  ]);
  assert.deepEqual(arrowsBackUp(graph), ["a -> b", "b -> c", "c -> a"]);
});
