// Installs this package as a new app would, and proves it works there: `npm pack` (whose `prepare` hook builds
// dist/), then `npm install` of a temp app depending on the tarball, offline (every dependency comes from npm's
// cache, filled by this checkout's own `npm ci`, at the versions of its package-lock.json), once with `ai` 7 and
// once with `ai` 6 (the `ai-6` alias), so a peer range that leaves either out fails as an app's install would
// (ERESOLVE); each app imports each entry point at run time and type-checks against the shipped declarations with
// `skipLibCheck: false`, with TypeScript 5.x (the devDependency's API) and with TypeScript 7's native `tsc`. It also
// installs a source folder that has no TypeScript, which must fail with prepare.mjs's message, not a bare
// ERR_MODULE_NOT_FOUND later. A CommonJS app (`"type": "commonjs"`, what `npm init` writes) must `require` every
// entry point and type-check too: the package is ESM, which Node >= 20.19 loads through require(). The first app
// also has LangGraph (`@langchain/langgraph`, `@langchain/langgraph-checkpoint`): a StateGraph compiled with
// `AgentSessionSaver` runs on a SQLite file, and a process importing every other entry point loads no `@langchain/`
// module (check-package-langgraph.mjs).
// CI runs it (.ci/run); locally: `node scripts/check-package.mjs` (a few minutes: two apps, each type-checked
// twice; about 5 on a busy 2-core machine).
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  checkLangChainNotLoaded,
  runLangGraphApp,
  sqliteAddon,
  sqlitePeers,
} from "./check-package-langgraph.mjs";
import { installApp } from "./package-app.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
/** Peers the app installs to use (and type-check) the entry points that import them. */
const peers = [
  "ai",
  "@openai/agents-core",
  "@modelcontextprotocol/sdk",
  "pg",
  "@types/pg",
  "ioredis",
  "@types/node",
  // LangGraph (agent-session/langgraph's peer, and the framework a LangGraph app runs), at this checkout's exact
  // devDependency versions.
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
];
/** The entry points the app imports: all but ./s3, whose peer (the AWS SDK) is too large to install here. */
const entries = ["agent-session", "agent-session/utils", "agent-session/ai", "agent-session/agent"];
entries.push(
  "agent-session/postgres",
  "agent-session/openai-agents",
  "agent-session/mcp",
  "agent-session/testing",
  // Loads no package on import: its peers are imported by the embedder's first call.
  "agent-session/embedders",
);

const work = mkdtempSync(join(tmpdir(), "agent-session-package-"));
const started = Date.now();
const step = (what) => console.log(`\n=== ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });

try {
  step("npm pack (prepare builds dist/)");
  const [packed] = JSON.parse(run(npm, ["pack", "--json", "--pack-destination", work], root));
  const tarball = join(work, packed.filename);
  const shipped = packed.files.map((f) => f.path);
  for (const needed of ["dist/index.js", "dist/index.d.ts", "dist/cli/main.js"]) {
    if (!shipped.includes(needed)) throw new Error(`the tarball lacks ${needed}`);
  }
  console.log(`${packed.filename}: ${shipped.length} files, ${packed.size} bytes`);

  step(
    "prepare again with nothing changed keeps dist/ (an app's later npm installs of a folder do not rebuild)",
  );
  const again = spawnSync(process.execPath, [join(root, "scripts", "prepare.mjs")], {
    cwd: root,
    encoding: "utf8",
  });
  const note = `${again.stdout}${again.stderr}`.trim();
  if (again.status !== 0 || !note.includes("kept")) throw new Error(`prepare rebuilt dist/:\n${note}`);
  console.log(note);

  // One app per supported AI SDK major: the devDependency `ai` (7) and its npm alias `ai-6`, each installed as `ai`.
  // `npm install` (with a lockfile, offline) resolves peers as an app's install does: a peer range that leaves out
  // the app's `ai` fails with ERESOLVE here.
  let app;
  for (const [major, source] of [
    [7, "node_modules/ai"],
    [6, "node_modules/ai-6"],
  ]) {
    step(`npm install --offline of an app on ai@${major} that depends on the tarball`);
    const dir = join(work, `app-ai${major}`);
    // The first app also runs a LangGraph graph on a SQLite file: on Node 20 that needs better-sqlite3.
    const extra = app === undefined ? await sqlitePeers() : [];
    installApp(dir, tarball, packed.integrity, { "node_modules/ai": source }, [...peers, ...extra]);
    if (extra.includes("better-sqlite3")) sqliteAddon(root, dir);
    step(`ai@${major}: import every entry point`);
    const imports = entries.map((e) => `const m${entries.indexOf(e)} = await import(${JSON.stringify(e)});`);
    writeFileSync(join(dir, "smoke.mjs"), `${imports.join("\n")}\n${smokeBody("imported")}`);
    process.stdout.write(run(process.execPath, ["smoke.mjs"], dir));
    step(`ai@${major}: type-check the app with TypeScript ${tsVersion()} and skipLibCheck: false`);
    writeFileSync(join(dir, "app.ts"), appSource());
    const problems = typeCheck(dir);
    if (problems.length > 0)
      throw new Error(`the shipped declarations do not hold on ai@${major}:\n${problems.join("\n")}`);
    step(`ai@${major}: type-check the app with TypeScript 7 (tsgo) and its default settings`);
    const native = typeCheckNative(dir);
    if (native.length > 0)
      throw new Error(
        `the shipped declarations do not hold in TypeScript 7 on ai@${major}:\n${native.join("\n")}`,
      );
    app ??= dir;
  }

  step("a LangGraph app: a StateGraph with AgentSessionSaver on SQLite, two turns on one thread, read back");
  runLangGraphApp(app);
  step("an app that does not import agent-session/langgraph loads no @langchain module");
  checkLangChainNotLoaded(app, entries);

  step("the README's first example type-checks under strict");
  const first = join(app, "first-session");
  mkdirSync(first);
  writeFileSync(join(first, "app.ts"), readmeExample("## Your first session"));
  const firstProblems = typeCheck(first, app);
  if (firstProblems.length > 0)
    throw new Error(`the README's first example does not compile:\n${firstProblems.join("\n")}`);

  step("a CommonJS app requires every entry point and type-checks");
  const cjs = join(app, "cjs");
  mkdirSync(cjs);
  writeFileSync(
    join(cjs, "package.json"),
    JSON.stringify({ name: "cjs-app", private: true, type: "commonjs" }),
  );
  const requires = entries.map((e) => `const m${entries.indexOf(e)} = require(${JSON.stringify(e)});`);
  writeFileSync(join(cjs, "smoke.js"), `${requires.join("\n")}\n${smokeBody("CommonJS app required")}`);
  process.stdout.write(run(process.execPath, ["smoke.js"], cjs));
  writeFileSync(join(cjs, "app.ts"), commonJsAppSource());
  const cjsProblems = typeCheck(cjs, app);
  if (cjsProblems.length > 0)
    throw new Error(`a CommonJS app cannot use the shipped declarations:\n${cjsProblems.join("\n")}`);

  step("source maps embed their sources (src/ is not shipped)");
  const maps = shipped.filter((path) => path.endsWith(".js.map"));
  for (const path of maps) {
    const map = JSON.parse(readFileSync(join(app, "node_modules", "agent-session", path), "utf8"));
    if (map.sourcesContent?.length !== map.sources.length)
      throw new Error(`${path} does not embed its sources`);
  }
  console.log(`${maps.length} source maps, each with its sources`);

  step("install a source folder without TypeScript: a clear error");
  const folder = join(work, "source");
  mkdirSync(join(folder, "scripts"), { recursive: true });
  cpSync(join(root, "scripts", "prepare.mjs"), join(folder, "scripts", "prepare.mjs"));
  const { dependencies: _deps, devDependencies: _dev, peerDependencies: _peers, ...bare } = pkg;
  writeFileSync(join(folder, "package.json"), JSON.stringify(bare, null, 2));
  const other = join(work, "other-app");
  mkdirSync(other);
  writeFileSync(join(other, "package.json"), JSON.stringify({ name: "other-app", private: true }));
  const failed = spawnSync(npm, ["install", "--offline", "--no-audit", "--no-fund", folder], {
    cwd: other,
    encoding: "utf8",
  });
  const said = `${failed.stdout}${failed.stderr}`;
  if (failed.status === 0 || !said.includes("TypeScript (a devDependency) is not installed")) {
    throw new Error(`installing an unbuilt folder did not fail with the prepare message:\n${said}`);
  }
  console.log("npm install <folder> failed, naming the missing build and what to run");
  step("done: the package installs, imports and type-checks");
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Stores a message through the first entry point (`m0`), in an async function so that ESM and CommonJS run it. */
function smokeBody(verb) {
  return `(async () => {
  const { Session, MemoryStore } = m0;
  const session = Session.create(new MemoryStore());
  await session.appendMessage({ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] });
  if ((await session.getMessage("m1")) === undefined) throw new Error("the message was not stored");
  console.log("${verb} ${entries.length} entry points; a session stores a message");
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;
}

/** An app that uses a few of the package's types, so its declarations (and what they import) get checked. */
function appSource() {
  return `import { MemoryStore, Session, SessionManager, type SessionMessage } from "agent-session";
import { type ChatRequestBody, loadChat, persistChatTurn, sessionMemory } from "agent-session/ai";
import * as agent from "agent-session/agent";
import { type UIMessage, wrapLanguageModel } from "ai";
import * as openai from "agent-session/openai-agents";
import * as postgres from "agent-session/postgres";
import * as utils from "agent-session/utils";
import { runProviderContract, runStorageContract } from "agent-session/testing";
import { describe, it } from "node:test";
import { Redis } from "ioredis";

const session = Session.create(new MemoryStore());
const message: SessionMessage = { id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] };
await session.appendMessage(message);
const manager = new SessionManager(new MemoryStore());
// The AI SDK doors against the app's own \`ai\` types (6 or 7): the chat request, the memory middleware.
const body: ChatRequestBody<UIMessage> = { id: "c1", messages: [], trigger: "submit-message" };
const turn = persistChatTurn<UIMessage>(session, body);
declare const model: Parameters<typeof wrapLanguageModel>[0]["model"];
const remembering = wrapLanguageModel({ model, middleware: sessionMemory({ session }) });
// Declared, never called: node:test's describe/it fit the suites' injected runner.
const contracts = () => {
  runProviderContract({ describe, it }, { name: "memory", create: async (policy) => new MemoryStore(policy) });
  runStorageContract({ describe, it }, { name: "memory", create: async () => new agent.MemorySessionStorage() });
};
// The app's own ioredis client (the devDependency's major, 6): its type must fit what the Redis storage takes.
const redis = () => new agent.RedisSessionStorage(new Redis("redis://127.0.0.1:6379"));
export const used = [session, manager, loadChat, turn, remembering, agent, openai, postgres, utils, contracts, redis];
`;
}

/** The first TypeScript block under a README heading, as a user copies it. */
function readmeExample(heading) {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(`\n${heading}\n`)))?.[1];
  if (!readme.includes(`\n${heading}\n`) || block === undefined)
    throw new Error(`README.md has no TypeScript block under ${JSON.stringify(heading)}`);
  return block;
}

/** A CommonJS app's source: TypeScript compiles its imports to require() calls of the ESM package. */
function commonJsAppSource() {
  return `import { MemoryStore, Session, type SessionMessage } from "agent-session";
import { persistChatTurn } from "agent-session/ai";
import * as agent from "agent-session/agent";

async function main(): Promise<void> {
  const session = Session.create(new MemoryStore());
  const message: SessionMessage = { id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] };
  await session.appendMessage(message);
}
export const used = [main, persistChatTurn, agent];
`;
}

/**
 * Type-checks the app like \`tsc\` with \`skipLibCheck: false\` and returns the problems in this package's files and the
 * app's. Problems inside other packages are printed but not counted: \`ai\` references \`json-schema\`'s types without
 * depending on them, which fails any strict app that checks libraries, with or without agent-session.
 */
function typeCheck(dir, app = dir) {
  const ts = typescript();
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  };
  const program = ts.createProgram([join(dir, "app.ts")], options);
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => "\n" };
  const ours = join(app, "node_modules", "agent-session");
  const problems = [];
  const checked = program.getSourceFiles().filter((f) => f.fileName.startsWith(ours)).length;
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const text = ts.formatDiagnostic(diagnostic, host).trim();
    const file = diagnostic.file?.fileName ?? "";
    if (file.startsWith(join(app, "node_modules")) && !file.startsWith(ours))
      console.log(`(not counted: another package) ${text.split("\n")[0]}`);
    else problems.push(text);
  }
  console.log(`checked ${checked} declaration files of agent-session`);
  return problems;
}

function typescript() {
  return createRequire(join(root, "package.json"))("typescript");
}

function tsVersion() {
  return typescript().version;
}

/**
 * Type-checks the app with TypeScript 7 (the native compiler, `typescript-7`, which has no JavaScript API: its CLI)
 * with the settings its `tsc --init` writes but `skipLibCheck: false`: `types: []` loads no `@types/*` package, so a
 * declaration of ours that needs Node's types fails here (`ai` 7's own do: they are not counted). The app is the ESM app without node:test.
 * Returns the problems in this package's files and the app's (others' are printed, not counted: see typeCheck).
 */
function typeCheckNative(dir) {
  const tsc = join(root, "node_modules", "typescript-7", "bin", "tsc");
  const config = {
    // What TypeScript 7's `tsc --init` writes, checking libraries and emitting nothing.
    compilerOptions: {
      module: "nodenext",
      target: "esnext",
      types: [],
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      strict: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      noUncheckedSideEffectImports: true,
      moduleDetection: "force",
      skipLibCheck: false,
      noEmit: true,
    },
    files: ["app7.ts"],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  writeFileSync(
    join(dir, "app7.ts"),
    appSource().replace(/^import \{ describe, it \} from "node:test";$/m, nodeTestShim()),
  );
  const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
  const version = spawnSync(process.execPath, [tsc, "--version"], { encoding: "utf8" }).stdout.trim();
  const ours = join("node_modules", "agent-session");
  const problems = [];
  for (const line of result.stdout.split("\n").filter((l) => /error TS\d+/.test(l))) {
    if (line.startsWith("node_modules/") && !line.startsWith(ours))
      console.log(`(not counted: another package) ${line}`);
    else problems.push(line);
  }
  if (result.status !== 0 && problems.length === 0 && !/error TS/.test(result.stdout))
    problems.push(`tsc failed: ${result.stdout}${result.stderr}`);
  console.log(`${version}: ${problems.length} problems in agent-session's declarations or the app`);
  return problems;
}

/** node:test's describe/it, declared: the TypeScript 7 app has no Node types. */
function nodeTestShim() {
  return "type Fn = (name: string, fn: () => unknown) => unknown;\ndeclare const describe: Fn, it: Fn;";
}
