// The declarations the package ships hold on their own: emitted from tsconfig.build.json (so `stripInternal`
// applies), then type-checked as an app with `skipLibCheck: false` checks them. A declaration that names a stripped
// @internal type is an error there, and an app with `skipLibCheck: true` silently reads it as `any`. Emitted from the
// sources as they are now, so it needs no build. Both steps run TypeScript 7's compiler (the `typescript-7`
// devDependency): about 4 s, where TypeScript 5.9's JavaScript compiler took a minute of CPU. The package as `npm
// run build` emits it (TypeScript 5.9) is checked by .ci/run's scripts/check-package.mjs with both majors.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSC = join(ROOT, "node_modules", "typescript-7", "bin", "tsc");
// Inside the checkout, so the declarations resolve their imports (`ai`, `pg`…) from its node_modules.
const WORK = join(ROOT, ".test-build", `declarations-${process.pid}`);
after(() => rmSync(WORK, { recursive: true, force: true }));

/** Runs TypeScript 7's `tsc` with `args`; its report (it prints its errors on stdout). */
function tsc(args: string[]): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [TSC, ...args], { cwd: ROOT, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The problems tsc finds in the declarations under `dir` when an app checks them (strict, libraries checked). */
function checkDeclarations(dir: string): string[] {
  const config = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ["node"],
    },
    include: ["**/*.d.ts"],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
  const { output } = tsc(["-p", join(dir, "tsconfig.json"), "--pretty", "false"]);
  // Only our files' problems count: `ai` names `json-schema` types it does not depend on, which fails any app that
  // checks libraries, with or without this package.
  const ours = relative(ROOT, dir);
  return output.split("\n").filter((line) => line.startsWith(ours));
}

test("the shipped declarations type-check with skipLibCheck: false", () => {
  const out = join(WORK, "dist");
  const emit = tsc([
    "-p",
    "tsconfig.build.json",
    "--emitDeclarationOnly",
    "--sourceMap",
    "false",
    "--inlineSources",
    "false",
    "--outDir",
    out,
  ]);
  assert.equal(emit.status, 0, emit.output);
  const files = readdirSync(out, { recursive: true }).filter((name) => String(name).endsWith(".d.ts"));
  assert.ok(files.length > 100, `the build emits the package's declarations (${files.length})`);
  assert.ok(files.includes("index.d.ts"));
  assert.deepEqual(checkDeclarations(out), []);
});

test("the check catches a declaration that names a stripped @internal type", () => {
  const dir = join(WORK, "stripped");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "hidden.d.ts"), "export {};\n");
  writeFileSync(
    join(dir, "public.d.ts"),
    'import { type Hidden } from "./hidden.js";\nexport declare function f(o?: Hidden): void;\n',
  );
  const problems = checkDeclarations(dir);
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.match(problems[0] ?? "", /has no exported member 'Hidden'/);
});
