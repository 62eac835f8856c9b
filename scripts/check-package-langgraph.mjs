// The LangGraph part of scripts/check-package.mjs: in the installed app (which has `@langchain/langgraph` and
// `@langchain/langgraph-checkpoint` as dependencies), a tiny StateGraph compiled with `AgentSessionSaver` on a SQLite
// file runs twice on one thread and its state is read back, from the same store and from a new one on the file; and
// a process that imports every other entry point loads no `@langchain/` module (the peer is optional: only apps
// that import agent-session/langgraph load it).
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadRecordApp } from "./package-app.mjs";

/**
 * What the app installs to open a SQLite file: nothing where Node has `node:sqlite` (>= 22.13), else better-sqlite3.
 * The app installs with `--ignore-scripts` (offline: its native build could not download), so `sqliteAddon` then
 * puts in the addon this checkout's `npm ci` built for the same version.
 */
export async function sqlitePeers() {
  const nodeSqlite = await import("node:sqlite").then(
    () => true,
    () => false,
  );
  return nodeSqlite ? [] : ["better-sqlite3"];
}

/** Copies this checkout's compiled better-sqlite3 addon into the app's copy of the same version. */
export function sqliteAddon(root, app) {
  const release = join("node_modules", "better-sqlite3", "build", "Release");
  mkdirSync(join(app, release), { recursive: true });
  copyFileSync(join(root, release, "better_sqlite3.node"), join(app, release, "better_sqlite3.node"));
}

/** Runs the LangGraph app in `app`: two turns on one thread, the state read back; prints what it read. */
export function runLangGraphApp(app) {
  writeFileSync(join(app, "langgraph.mjs"), LANGGRAPH_APP);
  process.stdout.write(execFileSync(process.execPath, ["langgraph.mjs"], { cwd: app, encoding: "utf8" }));
}

/**
 * Imports `entries` (every entry point but agent-session/langgraph) in a process that records each module it loads,
 * and refuses any `@langchain/` module among them; then imports agent-session/langgraph, whose `@langchain/` loads
 * the same record must see (the control).
 */
export function checkLangChainNotLoaded(app, entries) {
  writeFileSync(
    join(app, "lazy.mjs"),
    loadRecordApp(entries, ["agent-session/langgraph"], "node_modules/(@langchain/[^/]+)"),
  );
  const out = execFileSync(process.execPath, ["lazy.mjs"], { cwd: app, encoding: "utf8" });
  const { before, after } = JSON.parse(out.trim().split("\n").at(-1));
  if (before.length > 0)
    throw new Error(
      `an app importing ${entries.length} entry points but langgraph loaded ${before.join(", ")}`,
    );
  if (!after.includes("@langchain/langgraph-checkpoint"))
    throw new Error(`the load record missed agent-session/langgraph's peer: ${JSON.stringify(after)}`);
  console.log(
    `${entries.length} entry points imported, no @langchain module loaded; agent-session/langgraph then loads ${after.length} @langchain packages`,
  );
}

const LANGGRAPH_APP = `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteStore } from "agent-session";
import { AgentSessionSaver } from "agent-session/langgraph";

const State = Annotation.Root({
  said: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
const compile = (store) =>
  new StateGraph(State)
    .addNode("echo", (state) => ({ said: [\`echo of \${state.said.at(-1)}\`] }))
    .addEdge(START, "echo")
    .addEdge("echo", END)
    .compile({ checkpointer: new AgentSessionSaver(store, { ownerKey: "user_id" }) });
const config = { configurable: { thread_id: "t-1", user_id: "alice" } };
const expected = ["hi", "echo of hi", "again", "echo of again"];
const same = (a) => JSON.stringify(a) === JSON.stringify(expected);

const store = new SqliteStore("graph.db");
const graph = compile(store);
await graph.invoke({ said: ["hi"] }, config);
const out = await graph.invoke({ said: ["again"] }, config);
if (!same(out.said)) throw new Error(\`the second turn returned \${JSON.stringify(out.said)}\`);
if (!same((await graph.getState(config)).values.said)) throw new Error("getState did not read the thread back");
if ((await store.registry.get("t-1"))?.owner !== "alice") throw new Error("the thread is not alice's session");
await store.close();

// A new store on the file reads the thread back: the checkpoints are on disk, not in the first store's memory.
const reopened = new SqliteStore("graph.db");
const state = await compile(reopened).getState(config);
if (!same(state.values.said)) throw new Error(\`a new store read \${JSON.stringify(state.values.said)}\`);
const other = await compile(reopened).getState({ configurable: { thread_id: "t-1", user_id: "bob" } });
if (other.values.said !== undefined && other.values.said.length > 0) throw new Error("bob read alice's thread");
await reopened.close();
console.log("a StateGraph with AgentSessionSaver on SQLite ran two turns on one thread and read them back");
`;
