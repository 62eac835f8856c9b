// The floor table of docs/ARCHITECTURE.md ("Folders as floors") held against the code: every room of src/ (a
// top-level folder, or a file at its root) stands in the table once, on the floor its imports give it — one above the
// highest room it imports (types included), 0 for a room that imports none. A folder added, moved or made to import a
// higher room fails here until the map says so.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");

/** A module's room, as the table names it: `store/` for src/store/feed/feed.ts, `errors.ts` for src/errors.ts. */
function roomOf(path: string): string {
  const parts = relative(SRC, path).replaceAll("\\", "/").split("/");
  return parts.length > 1 ? `${parts[0]}/` : parts[0]!;
}

/** Each room's floor from the import graph: one above the highest room it imports. */
function floorsFromCode(): Map<string, number> {
  const edges = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = roomOf(file);
    const to = edges.get(from) ?? new Set<string>();
    for (const target of imports(file, true)) {
      const room = roomOf(target);
      if (room !== from && !room.startsWith("..")) to.add(room);
    }
    edges.set(from, to);
  }
  const floors = new Map<string, number>();
  // The rooms import each other without a circle (layers.test.ts), so the recursion ends.
  const floorOf = (room: string): number => {
    const known = floors.get(room);
    if (known !== undefined) return known;
    const below = [...(edges.get(room) ?? [])].map(floorOf);
    const floor = below.length === 0 ? 0 : Math.max(...below) + 1;
    floors.set(room, floor);
    return floor;
  };
  for (const room of edges.keys()) floorOf(room);
  return floors;
}

/** The rooms the map places, by floor: the table's rows `| N | `a/`, `b.ts` | …`. */
function floorsFromMap(): Map<string, number> {
  const doc = readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Folders as floors"), doc.indexOf("The floors are the folders'"));
  const floors = new Map<string, number>();
  for (const row of section.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)) {
    for (const name of row[2]!.matchAll(/`([^`]+)`/g)) {
      assert.ok(!floors.has(name[1]!), `${name[1]} stands in the floor table twice`);
      floors.set(name[1]!, Number(row[1]));
    }
  }
  return floors;
}

test("ARCHITECTURE.md's floor table names every room of src/ on the floor its imports give it", () => {
  const code = floorsFromCode();
  const map = floorsFromMap();
  const rooms = readdirSync(SRC, { withFileTypes: true }).map((e) =>
    e.isDirectory() ? `${e.name}/` : e.name,
  );
  assert.deepEqual(
    rooms.filter((room) => !map.has(room)).sort(),
    [],
    "add the room to the floor table of docs/ARCHITECTURE.md",
  );
  assert.deepEqual(
    [...map.keys()].filter((room) => !rooms.includes(room)).sort(),
    [],
    "the floor table names a room src/ no longer has",
  );
  const misplaced = rooms
    .filter((room) => code.has(room) && code.get(room) !== map.get(room))
    .map((room) => `${room}: the map says ${map.get(room)}, its imports give ${code.get(room)}`);
  assert.deepEqual(
    misplaced.sort(),
    [],
    "move the room to the floor its imports give it in docs/ARCHITECTURE.md",
  );
});
