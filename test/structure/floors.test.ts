// The floors inside each SQL backend (docs/ARCHITECTURE.md, "Inside a backend"): a ground floor (`connection/`: the
// driver, table names, the statement cache, the program runner, the layout lock), the row modules in the middle,
// and a top that wires them (the store, its options and migrations, the reference-named providers, the shared-store
// caches). A floor imports only its own and those below, types included: a row module that needs the store's
// options takes them as a parameter instead. Cycles among the middle's modules are measured, not forbidden yet.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { imports, sourceFiles } from "./fixtures/imports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The top floor of a backend: these files, by their path inside it. */
const TOP = new Set([
  "index.ts",
  "store.ts",
  "schema.ts",
  "session-provider.ts",
  "reference.ts",
  "shared.ts",
  "shared-path.ts",
]);

type Floor = "ground" | "middle" | "top";
const LEVEL: Record<Floor, number> = { ground: 0, middle: 1, top: 2 };

function floorOf(inside: string): Floor {
  if (inside.startsWith("connection/")) return "ground";
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
      "move what a lower floor needs down (connection/ for the ground), or pass it in as a parameter",
    );
  });
}
