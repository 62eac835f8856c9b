// The storage rooms (src/sql/room.ts, docs/ARCHITECTURE.md "One room per storage concern"): each engine takes its
// rooms from one list (src/sql/rooms/), and a room's tables are named only inside its folder, so a new storage
// concern is its folder and a line in each list. The schema's versions stay those released: no version is claimed
// twice (by two rooms, or a room and the core) and none is missing.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { POSTGRES_MIGRATIONS } from "../../src/postgres/schema.js";
import type { Plain } from "../../src/sql/room.js";
import { POSTGRES_ROOMS } from "../../src/sql/rooms/postgres.js";
import { SQLITE_ROOMS } from "../../src/sql/rooms/sqlite.js";
import { SQLITE_MIGRATIONS } from "../../src/sqlite/schema.js";
import type { OwnerDataTable } from "../../src/store/owner-data.js";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SRC = join(ROOT, "src");
const SQL = join(SRC, "sql");
const inside = (path: string) => relative(ROOT, path).replaceAll("\\", "/");

// Only the tables' names are read here.
const plain: Plain = (table) => ({ table }) as OwnerDataTable;

/** Each room's tables, by its name, from both engines' declarations. */
function roomTables(): Map<string, Set<string>> {
  const tables = new Map<string, Set<string>>();
  for (const room of [...SQLITE_ROOMS, ...POSTGRES_ROOMS]) {
    const names = tables.get(room.name) ?? new Set<string>();
    for (const t of room.ownerData({ plain, withSession: "with its session" })) names.add(t.table);
    tables.set(room.name, names);
  }
  return tables;
}

test("both engines list the same rooms in the same order, each a folder of src/sql", () => {
  const names = SQLITE_ROOMS.map((room) => room.name);
  assert.deepEqual(
    POSTGRES_ROOMS.map((room) => room.name),
    names,
  );
  assert.ok(names.includes("checkpoints") && names.includes("graph-store"), "the rooms are found");
  for (const name of names) assert.ok(existsSync(join(SQL, name)), `src/sql/${name}/ exists`);
});

test("a room's tables are named in src only inside its room", () => {
  const found: string[] = [];
  const tables = roomTables();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    for (const [room, names] of tables) {
      if (file.startsWith(`${join(SQL, room)}/`)) continue;
      for (const table of names) if (text.includes(table)) found.push(`${inside(file)} names ${table}`);
    }
  }
  assert.ok(
    [...tables.values()].every((names) => names.size > 0),
    "each room declares its tables",
  );
  assert.deepEqual(found.sort(), [], "move what names a room's table into its room (src/sql/room.ts)");
});

test("the engines' shared rooms of src/sql and their schemas and registries reach a room only through its list", () => {
  const rooms = SQLITE_ROOMS.map((room) => `${join(SQL, room.name)}/`);
  const shared = ["owner-data", "erase", "rekey", "rekey-hooks", "purge", "sealing", "adopt", "transfer"];
  const files = [
    ...shared.flatMap((dir) => sourceFiles(join(SQL, dir))),
    ...["sqlite", "postgres"].flatMap((engine) =>
      ["schema.ts", "registry.ts"].map((name) => join(SRC, engine, name)),
    ),
  ];
  const found = files.flatMap((file) =>
    imports(file, true)
      .filter((target) => rooms.some((room) => target.startsWith(room)))
      .map((target) => `${inside(file)} -> ${inside(target)}`),
  );
  assert.deepEqual(found.sort(), [], "take the room from src/sql/rooms/, never by its name");
});

for (const [engine, migrations] of [
  ["SQLite", SQLITE_MIGRATIONS],
  ["Postgres", POSTGRES_MIGRATIONS],
] as const) {
  test(`${engine}: every schema version is claimed once, none missing, the rooms' at their released versions`, () => {
    const versions = migrations.map((m) => m.version);
    const latest = Math.max(...versions);
    assert.deepEqual(
      versions,
      Array.from({ length: latest }, (_, i) => i + 1),
      "versions 1..latest, once each, in order",
    );
    const rooms = engine === "SQLite" ? SQLITE_ROOMS : POSTGRES_ROOMS;
    const claimed = Object.fromEntries(rooms.map((r) => [r.name, r.migrations.map((m) => m.version)]));
    // Released: a database migrated before the rooms must not migrate again.
    assert.deepEqual(
      claimed,
      engine === "SQLite"
        ? { checkpoints: [27, 30], "graph-store": [28] }
        : { checkpoints: [26, 29], "graph-store": [27] },
    );
  });
}
