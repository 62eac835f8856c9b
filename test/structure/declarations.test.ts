// The declarations the package ships hold on their own: emitted as `npm run build` emits them (tsconfig.build.json,
// so `stripInternal` applies), then type-checked as an app with `skipLibCheck: false` checks them. A declaration
// that names a stripped @internal type is an error there, and an app with `skipLibCheck: true` silently reads it as
// `any`. Emitted in memory, so it needs no build and checks the sources as they are now.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// A path inside the checkout, so the declarations resolve their imports (`ai`, `pg`…) from its node_modules.
const OUT = join(ROOT, "dist-declarations-check");

function buildOptions(): ts.CompilerOptions {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.build.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) =>
        assert.fail(ts.flattenDiagnosticMessageText(d.messageText, "\n")),
    },
  );
  assert.ok(config, "tsconfig.build.json parses");
  return { ...config.options, outDir: OUT, emitDeclarationOnly: true, declaration: true, sourceMap: false };
}

/** The build's .d.ts files, by absolute path (as they would sit in dist/). */
function emitDeclarations(): Map<string, string> {
  const options = buildOptions();
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.build.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: () => {},
    },
  );
  const program = ts.createProgram(config?.fileNames ?? [], options);
  const files = new Map<string, string>();
  const result = program.emit(undefined, (name, text) => files.set(name, text));
  assert.equal(result.emitSkipped, false);
  return files;
}

function ancestors(file: string): string[] {
  const out: string[] = [];
  for (let dir = dirname(file); dir.startsWith(OUT); dir = dirname(dir)) out.push(dir);
  return out;
}

/** Problems in the given declarations when checked like an app does (strict, libraries checked). */
function checkDeclarations(files: Map<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  const source = host.getSourceFile.bind(host);
  host.readFile = (name) => files.get(name) ?? read(name);
  host.fileExists = (name) => files.has(name) || exists(name);
  const dirs = new Set([...files.keys()].flatMap((name) => ancestors(name)));
  const dirExists = host.directoryExists?.bind(host);
  host.directoryExists = (dir) => dirs.has(dir) || (dirExists?.(dir) ?? false);
  host.getSourceFile = (name, version, onError, create) => {
    const text = files.get(name);
    if (text === undefined) return source(name, version, onError, create);
    return ts.createSourceFile(name, text, version, true);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const format = {
    getCanonicalFileName: (f: string) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => "\n",
  };
  // Only our files' problems count: `ai` names `json-schema` types it does not depend on, which fails any app that
  // checks libraries, with or without this package.
  return program
    .getSourceFiles()
    .filter((file) => files.has(file.fileName))
    .flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])
    .map((d) => ts.formatDiagnostic(d, format).trim());
}

test("the shipped declarations type-check with skipLibCheck: false", () => {
  const files = emitDeclarations();
  assert.ok(files.size > 100, `the build emits the package's declarations (${files.size})`);
  assert.ok(files.has(join(OUT, "index.d.ts")));
  assert.deepEqual(checkDeclarations(files), []);
});

test("the check catches a declaration that names a stripped @internal type", () => {
  const files = new Map([
    [join(OUT, "hidden.d.ts"), "export {};\n"],
    [
      join(OUT, "public.d.ts"),
      'import { type Hidden } from "./hidden.js";\nexport declare function f(o?: Hidden): void;\n',
    ],
  ]);
  const problems = checkDeclarations(files);
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? "", /has no exported member 'Hidden'/);
});
