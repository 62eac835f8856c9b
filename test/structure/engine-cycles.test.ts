// The middle floor of each engine folder (floors.test.ts) without circles: its units (a subfolder, or a file at the
// folder's root) import each other one way only, types included, so each can be read knowing only those below it.
// Neither engine holds one; a unit that would close a circle moves what it needs into a unit below (as
// sql/engines/postgres/timestamp.ts and feed/append-log.ts's LoggedAppend did) or into src/sql.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { circlesOf } from "./fixtures/circles.js";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The units of each engine still in a circle, with the reason it is not untied yet. */
const KNOWN: Record<string, readonly string[]> = {
  sqlite: [],
  postgres: [],
};

/** Unit → the units of the same engine it imports. */
function unitGraph(backend: string): Map<string, Set<string>> {
  const dir = join(ROOT, "src", backend);
  const unitOf = (path: string) => {
    const inside = relative(dir, path).replaceAll("\\", "/");
    return inside.includes("/") ? `${inside.split("/")[0]}/` : inside;
  };
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(dir)) {
    const from = unitOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    for (const target of imports(file, true)) {
      if (relative(dir, target).startsWith("..")) continue;
      const to = unitOf(target);
      if (to !== from) edges.add(to);
    }
    graph.set(from, edges);
  }
  return graph;
}

for (const [backend, known] of Object.entries(KNOWN)) {
  test(`src/${backend}: the middle floor's units import each other without a new circle`, () => {
    const graph = unitGraph(backend);
    assert.ok(graph.size > 10, "the engine's units are found");
    const grown = circlesOf(graph)
      .filter((circle) => circle.some((unit) => !known.includes(unit)))
      .map((circle) => circle.join(" ⇄ "));
    assert.deepEqual(
      grown,
      [],
      "move what the units of the circle share into a unit below them, or into src/sql",
    );
  });
}

test("the circle scan finds a circle of units", () => {
  const graph = new Map([
    ["a.ts", new Set(["b/"])],
    ["b/", new Set(["a.ts"])],
    ["c.ts", new Set(["a.ts"])],
  ]);
  assert.deepEqual(circlesOf(graph), [["a.ts", "b/"]]);
});
