// The framework doors as their apps install them, on Node 24 (Mastra needs Node >= 22.13, eve Node >= 24 and ai@7):
// `npm pack`, then an app that depends on the tarball, @mastra/core, @mastra/memory, eve and ai@7, installed offline
// at this checkout's versions (package-app.mjs). In it: a Mastra `Memory` on `mastraStorage(new SqliteStore(file))`
// keeps a thread and reads it back from a new store on the file, and our search finds what Mastra stored; eve's
// `defineMemory` takes `agentSessionMemory({ manager })`; and a process that imports every other entry point loads
// no module of @mastra or eve (both peers are optional). CI runs it on Node 24 (.ci/run); locally:
// `PATH=<node 24>/bin:$PATH node scripts/check-package-doors.mjs`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installApp, loadRecordApp } from "./package-app.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
if (Number(process.versions.node.split(".")[0]) < 24) {
  console.error(`the doors' apps need Node >= 24 (eve's engines); this is ${process.version}`);
  process.exit(1);
}
/** Every entry point but the doors under test and ./s3 (its AWS SDK is too large to install here). */
const others = [
  "agent-session",
  "agent-session/utils",
  "agent-session/ai",
  "agent-session/agent",
  "agent-session/postgres",
  "agent-session/mcp",
  "agent-session/testing",
];
const work = mkdtempSync(join(tmpdir(), "agent-session-doors-"));
const run = (file, cwd) => execFileSync(process.execPath, [file], { cwd, encoding: "utf8" });
try {
  const packed = JSON.parse(
    execFileSync(npm, ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" }),
  )[0];
  const app = join(work, "app");
  installApp(
    app,
    join(work, packed.filename),
    packed.integrity,
    {},
    ["@mastra/core", "@mastra/memory", "eve", "ai", "zod", "@modelcontextprotocol/sdk"], // The override this checkout has too (package.json): @mastra/core depends on chat ^4.37 while eve's optional peer
    // names a chat ^4.42 that this machine's registry lacks, so an app with both pins chat as we do.
    { chat: pkg.overrides.chat },
  );
  writeFileSync(join(app, "mastra.mjs"), mastraApp());
  process.stdout.write(run("mastra.mjs", app));
  writeFileSync(join(app, "eve.mjs"), eveApp());
  process.stdout.write(run("eve.mjs", app));
  writeFileSync(
    join(app, "lazy.mjs"),
    loadRecordApp(others, ["agent-session/mastra", "agent-session/eve"], "node_modules/(@mastra/[^/]+|eve)/"),
  );
  const { before, after } = JSON.parse(run("lazy.mjs", app).trim().split("\n").at(-1));
  if (before.length > 0) throw new Error(`an app importing ${others.length} entry points loaded ${before}`);
  // The control: agent-session/mastra loads its peer on import (eve's entry loads eve only when eve asks for tools).
  if (!after.includes("@mastra/core"))
    throw new Error(`the load record missed agent-session/mastra's peer: ${JSON.stringify(after)}`);
  console.log(`${others.length} entry points loaded no @mastra or eve module; the doors then load ${after}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

function mastraApp() {
  return `import { Memory } from "@mastra/memory";
import { SessionManager, SqliteStore } from "agent-session";
import { mastraStorage } from "agent-session/mastra";

const texts = ["I keep a kayak called zqxdoorboat", "noted"];
const store = new SqliteStore("mastra.db");
const memory = new Memory({ storage: mastraStorage(store) });
await memory.saveThread({
  thread: { id: "t-1", resourceId: "alice", title: "trip", metadata: {}, createdAt: new Date(), updatedAt: new Date() },
});
await memory.saveMessages({
  messages: texts.map((text, i) => ({
    id: \`m\${i}\`,
    threadId: "t-1",
    resourceId: "alice",
    role: i === 0 ? "user" : "assistant",
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, i)),
    content: { format: 2, parts: [{ type: "text", text }] },
  })),
});
if ((await store.registry.get("t-1"))?.owner !== "alice") throw new Error("the thread is not alice's session");
const hits = await new SessionManager(store).forOwner("alice").search("zqxdoorboat");
if (!hits.some((hit) => hit.id === "m0")) throw new Error(\`our search missed Mastra's message: \${JSON.stringify(hits)}\`);
await store.close();

const reopened = new SqliteStore("mastra.db");
const { messages } = await new Memory({ storage: mastraStorage(reopened) }).recall({ threadId: "t-1", resourceId: "alice" });
const read = messages.map((m) => m.content.parts.find((p) => p.type === "text")?.text);
if (JSON.stringify(read) !== JSON.stringify(texts)) throw new Error(\`a new store read \${JSON.stringify(read)}\`);
await reopened.close();
console.log("a Mastra Memory on agent-session/mastra kept a thread on SQLite, read it back, and our search found it");
`;
}

function eveApp() {
  return `import { SessionManager } from "agent-session";
import { agentSessionMemory } from "agent-session/eve";
import { defineMemory } from "eve/memory";
import { byPrincipal } from "eve/memory/scope";

const manager = SessionManager.create("eve.db");
const memory = defineMemory({
  description: "Remember stable facts and preferences about the caller.",
  provider: agentSessionMemory({ manager }),
  scope: byPrincipal,
});
if (memory === undefined || memory === null) throw new Error("defineMemory refused the provider");
await manager.close();
console.log("eve's defineMemory took agentSessionMemory on a SQLite file");
`;
}
