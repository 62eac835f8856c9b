// The storage rooms (src/sql/room.ts, docs/ARCHITECTURE.md "One room per storage concern"): one list
// (src/sql/rooms/list.ts) holds every room's declaration (its room.ts), each engine takes the rooms from its view of
// the list (src/sql/rooms/sqlite.ts, postgres.ts), and a room's tables are named only inside its folder, so a new
// storage concern is its folder and a line in the list. The list loads no engine's runtime (a SQLite store loads no
// Postgres module). The schema's versions stay those released: no version is claimed twice (by two rooms, or a room
// and the core) and none is missing.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { POSTGRES_MIGRATIONS } from "../../src/postgres/schema.js";
import type { Plain } from "../../src/sql/room.js";
import { ROOMS } from "../../src/sql/rooms/list.js";
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
  for (const room of ROOMS) {
    const names = new Set<string>();
    for (const part of [room.sqlite, room.postgres])
      for (const t of part.ownerData({ plain, withSession: "with its session" })) names.add(t.table);
    tables.set(room.name, names);
  }
  return tables;
}

test("the list holds every room once, each a folder of src/sql with its declaration", () => {
  const names = ROOMS.map((room) => room.name);
  assert.ok(names.includes("checkpoints") && names.includes("graph-store"), "the rooms are found");
  assert.equal(new Set(names).size, names.length, "a room is listed once");
  for (const name of names)
    assert.ok(existsSync(join(SQL, name, "room.ts")), `src/sql/${name}/room.ts exists`);
  // A declaration left out of the list would leave its rows behind a session's erasure: each one is listed.
  const declared = readdirSync(SQL).filter((dir) => existsSync(join(SQL, dir, "room.ts")));
  assert.deepEqual(declared.sort(), [...names].sort(), "add the room to src/sql/rooms/list.ts");
});

/** The modules `file` loads at run time, itself included (type-only imports load nothing). */
function loaded(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const target of imports(file, false)) loaded(target, seen);
  return seen;
}

/** The packages `file` imports for their values (a type-only import loads nothing). */
function packages(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  return source.statements.flatMap((statement) => {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) return [];
    const clause = statement.importClause;
    const bindings = clause?.namedBindings;
    const onlyTypes =
      clause?.isTypeOnly ||
      (clause?.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.every((element) => element.isTypeOnly));
    const name = statement.moduleSpecifier.text;
    return onlyTypes || name.startsWith(".") ? [] : [name];
  });
}

test("the list loads no engine's runtime: its rooms' declarations import engine code only as types", () => {
  const list = join(SQL, "rooms", "list.ts");
  const engine = /^src\/(sqlite|postgres)\/|^src\/sql\/engines\/|^src\/sql\/.*\/(sqlite|postgres)[^/]*\.ts$/;
  const driver = /^(node:|pg$|pg-|@electric-sql\/|better-sqlite3)/;
  const files = [...loaded(list)];
  const found = [
    ...files.map(inside).filter((file) => engine.test(file)),
    ...files.flatMap((file) =>
      packages(file)
        .filter((p) => driver.test(p))
        .map((p) => `${inside(file)} -> ${p}`),
    ),
  ];
  assert.ok(
    files.some((file) => file.endsWith(join("checkpoints", "room.ts"))),
    "the declarations are read",
  );
  assert.deepEqual(found.sort(), [], "a room's declaration reaches an engine's code only by `import type`");
  // From a room's folder the list imports its declaration only.
  const reached = imports(list, true).filter((target) => !target.startsWith(join(SQL, "rooms")));
  assert.deepEqual(
    reached
      .map(inside)
      .filter(
        (file) => !file.endsWith("/room.ts") && !["src/sql/room.ts", "src/sql/room-engine.ts"].includes(file),
      ),
    [],
  );
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

test("the engines' shared rooms of src/sql, their views of the list, schemas and registries reach a room only through the list", () => {
  const rooms = ROOMS.map((room) => `${join(SQL, room.name)}/`);
  const shared = ["owner-data", "erase", "rekey", "rekey-hooks", "purge", "sealing", "adopt", "transfer"];
  const files = [
    ...shared.flatMap((dir) => sourceFiles(join(SQL, dir))),
    ...["sqlite.ts", "postgres.ts"].map((name) => join(SQL, "rooms", name)),
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
    const part = engine === "SQLite" ? ("sqlite" as const) : ("postgres" as const);
    // Released: a database migrated before must not migrate again, so a released room keeps its versions; a new
    // room's versions are its own (the count above holds them once each), and need no line here.
    const released: Record<string, number[]> =
      engine === "SQLite"
        ? { checkpoints: [27, 30], "graph-store": [28] }
        : { checkpoints: [26, 29], "graph-store": [27] };
    for (const [name, versions] of Object.entries(released)) {
      const room = ROOMS.find((r) => r.name === name);
      assert.ok(room, `released room ${name} is listed`);
      assert.deepEqual(
        room[part].migrations.map((m) => m.version).slice(0, versions.length),
        versions,
        `${name}'s released versions`,
      );
    }
  });
}

// A room's statements are written once over what an engine hands every room (src/sql/room-engine.ts), and its store
// is made by its declaration: the files a room still holds per engine are these, each with why, so no room grows
// engine files again (a new room has none).
const ENGINE_FILES: Readonly<Record<string, { files: readonly string[]; why: string }>> = {
  checkpoints: {
    files: [
      "postgres-guard.ts",
      "postgres-single.ts",
      "postgres-store.ts",
      "postgres.ts",
      "sqlite-store.ts",
      "sqlite.ts",
    ],
    why:
      "not moved to the room's engine yet: a warm put and putWrites are one statement on Postgres with the key " +
      "guard spliced in as CTEs (postgres-single.ts, postgres-guard.ts), which SQLite runs as several",
  },
};

test("a room holds no engine-named file beyond those listed with their reason", () => {
  const found = Object.fromEntries(
    ROOMS.map((room) => [
      room.name,
      readdirSync(join(SQL, room.name))
        .filter((file) => /^(sqlite|postgres)[^/]*\.ts$/.test(file))
        .sort(),
    ]),
  );
  const allowed = Object.fromEntries(ROOMS.map((room) => [room.name, ENGINE_FILES[room.name]?.files ?? []]));
  assert.deepEqual(
    found,
    allowed,
    "write the statements once over the room's engine (src/sql/room-engine.ts)",
  );
  for (const room of ROOMS)
    if (room.store) assert.equal(ENGINE_FILES[room.name], undefined, `${room.name} makes its store once`);
});
