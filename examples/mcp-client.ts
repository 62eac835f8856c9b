// The MCP server end to end: a store with a conversation, `agent-session/mcp` serving it over Streamable HTTP, and
// the MCP SDK's own client searching it and reading the turns around the hit, as Claude Code would.
// Run with `node --import tsx examples/mcp-client.ts` (a temporary SQLite file, removed at the end).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SessionManager, SqliteStore } from "../src/index.js";
import { startMcpHttp } from "../src/mcp/index.js";

const dir = mkdtempSync(join(tmpdir(), "agent-session-mcp-example-"));
const store = new SqliteStore(join(dir, "chat.db"));
const manager = new SessionManager(store);
const say = (id: string, role: "user" | "assistant", text: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text }],
});

// One user's conversation, registered with its owner so the server can be scoped to it.
await manager.forOwner("user-42").create("Deploy planning", { id: "deploy" });
await manager.append("deploy", say("u1", "user", "When should we ship the payments deployment?"));
await manager.append(
  "deploy",
  say("a1", "assistant", "Thursday morning: a Friday deploy leaves no one to roll back."),
);
await manager.append("deploy", say("u2", "user", "Thursday it is. Book the deploy window."));
// Recorded as the session's, so the owner-scoped server reaches it (an unrecorded row is no one's: MCP.md).
await store.blocks.setBlock("memory_deploy", "- Deploys happen on Thursdays.", { sessionId: "deploy" });

const server = await startMcpHttp({ store, owner: "user-42" });
const client = new Client({ name: "example", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(server.url));
await client.connect(transport as unknown as Parameters<Client["connect"]>[0]);

const text = async (name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args });
  return (result.content as { text: string }[])[0]?.text ?? "";
};

console.log(`Tools at ${server.url}:`, (await client.listTools()).tools.map((t) => t.name).join(", "));
const hits = await text("search_memory", { query: "which day do we deploy?", role: "assistant" });
console.log(`\nsearch_memory:\n${hits}`);
const [, session, message] = /session="([^"]+)" message="([^"]+)"/.exec(hits) ?? [];
if (session && message) {
  console.log(
    `\nread_turns_around:\n${await text("read_turns_around", { session, message, before: 1, after: 1 })}`,
  );
}
console.log(`\nread_block:\n${await text("read_block", { session: "deploy", label: "memory" })}`);

await client.close();
await server.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
