// The floors of the SQL code (docs/ARCHITECTURE.md, "Each backend's inside"). Each engine folder (src/sqlite,
// src/postgres) stacks in two floors over the shared ground of src/sql: the row modules in the middle, and a top that
// wires them (the store and its opening, its options and migrations, the reference-named providers, the shared-store
// caches). A floor imports only its own and those below, types included: a row module that needs the store's
// options takes them as a parameter instead. src/sql itself holds a ground (`program.ts`, the program's vocabulary,
// and `engines/`: each engine's driver, table names, statement cache, program runner and layout) and one folder per
// storage concern above it; the ground imports no concern, and the concern folders import each other without a
// circle.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { circlesOf } from "./fixtures/circles.js";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SQL = join(ROOT, "src", "sql");

/** The top floor of a backend: these files, by their path inside it. */
const TOP = new Set([
  "index.ts",
  "store.ts",
  "open.ts",
  "schema.ts",
  "session-provider.ts",
  "reference.ts",
  "shared.ts",
  "shared-path.ts",
]);

type Floor = "middle" | "top";
const LEVEL: Record<Floor, number> = { middle: 1, top: 2 };

function floorOf(inside: string): Floor {
  return TOP.has(inside) ? "top" : "middle";
}

/** Every import inside `backend` that goes to a higher floor, as "from -> to". */
function upward(backend: string): string[] {
  const dir = join(ROOT, "src", backend);
  const inside = (path: string) => relative(dir, path).replaceAll("\\", "/");
  const found: string[] = [];
  for (const file of sourceFiles(dir)) {
    const from = floorOf(inside(file));
    for (const target of imports(file, true)) {
      const to = inside(target);
      if (to.startsWith("..")) continue;
      if (LEVEL[floorOf(to)] > LEVEL[from]) found.push(`${backend}/${inside(file)} -> ${to}`);
    }
  }
  return found.sort();
}

for (const backend of ["sqlite", "postgres"]) {
  test(`src/${backend}: no floor imports a floor above it`, () => {
    const top = [...TOP].filter((file) =>
      sourceFiles(join(ROOT, "src", backend)).some((f) => f.endsWith(`/${file}`)),
    );
    assert.ok(top.includes("store.ts") && top.includes("schema.ts"), "the top floor's files exist");
    assert.deepEqual(
      upward(backend),
      [],
      "move what a lower floor needs down (src/sql/engines/ for the ground), or pass it in as a parameter",
    );
  });
}

/** A file's unit in src/sql: `ground`, or the concern folder it lies in. */
function unitOf(path: string): string {
  const inside = relative(SQL, path).replaceAll("\\", "/");
  if (inside === "program.ts" || inside.startsWith("engines/")) return "ground";
  return inside.includes("/") ? inside.split("/")[0]! : inside;
}

/** Unit → the units of src/sql it imports (types included). */
function sqlGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SQL)) {
    const from = unitOf(file);
    for (const target of imports(file, true)) {
      if (relative(SQL, target).startsWith("..")) continue;
      const to = unitOf(target);
      if (to === from) continue;
      graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return graph;
}

test("src/sql: the ground imports no concern, and its two engines import nothing of each other", () => {
  const found: string[] = [];
  for (const file of sourceFiles(SQL)) {
    const inside = relative(SQL, file).replaceAll("\\", "/");
    if (unitOf(file) !== "ground") continue;
    for (const target of imports(file, true)) {
      const to = relative(SQL, target).replaceAll("\\", "/");
      if (to.startsWith("..")) continue;
      const engine = (p: string) => (p.startsWith("engines/") ? p.split("/")[1] : undefined);
      if (unitOf(target) !== "ground") found.push(`${inside} -> ${to}`);
      else if (engine(inside) && engine(to) && engine(inside) !== engine(to))
        found.push(`${inside} -> ${to}`);
    }
  }
  assert.ok(sourceFiles(join(SQL, "engines")).length > 10, "the ground's files exist");
  assert.deepEqual(
    found.sort(),
    [],
    "a concern builds on the ground, never the reverse: pass it in as a parameter",
  );
});

test("src/sql: the concern folders import each other without a circle", () => {
  const graph = sqlGraph();
  assert.ok(graph.size > 3, "the concern folders are found");
  assert.deepEqual(
    circlesOf(graph).map((circle) => circle.join(" ⇄ ")),
    [],
    "move what two concerns share into the one below, or into the ground",
  );
});
