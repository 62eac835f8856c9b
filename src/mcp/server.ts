import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { importOptional, nodeRequire } from "../runtime/load.js";
import { listBlocksTool, readBlockTool, writeBlockTool } from "./block-tools.js";
import { deleteFactTool, forgetFactTool, listFactsTool } from "./fact-tools.js";
import { readAroundTool, readSessionTool } from "./history-tools.js";
import { type McpServerOptions, type ResolvedOptions, resolveOptions } from "./options.js";
import { SessionScope } from "./scope.js";
import { searchTool } from "./search-tool.js";
import { listSessionsTool } from "./session-tools.js";
import { callTool, type McpTool, type ToolContext } from "./tool.js";
import { refuseWriteTools } from "./writes-off.js";

/** Every tool, in the order clients list them; `writes` tools only when writes are enabled. */
export const MCP_TOOLS: readonly McpTool[] = [
  searchTool,
  readAroundTool,
  readSessionTool,
  listSessionsTool,
  listFactsTool,
  listBlocksTool,
  readBlockTool,
  writeBlockTool,
  forgetFactTool,
  deleteFactTool,
] as unknown as readonly McpTool[];

type McpModule = typeof import("@modelcontextprotocol/sdk/server/mcp.js");

/** The SDK's server module, loaded on first use: the package is an optional peer dependency. */
export function loadMcpSdk(): Promise<McpModule> {
  return importOptional<McpModule>(
    "@modelcontextprotocol/sdk",
    "agent-session's MCP server",
    () => import("@modelcontextprotocol/sdk/server/mcp.js"),
  );
}

/** The package's version, shown to clients (src/runtime and dist/runtime are both two levels below its root). */
function packageVersion(): string {
  return (nodeRequire("the MCP server")("../../package.json") as { version: string }).version;
}

/** An McpServer over checked options (the HTTP transport makes one per request from the same options). */
export async function serverFor(resolved: ResolvedOptions): Promise<McpServer> {
  const { McpServer } = await loadMcpSdk();
  const server = new McpServer({ name: resolved.name, version: packageVersion() });
  const context: ToolContext = {
    store: resolved.store,
    scope: new SessionScope(resolved.store, resolved.owner),
    limits: resolved.limits,
  };
  for (const tool of MCP_TOOLS) {
    if (tool.writes && !resolved.writes) continue;
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.schema,
        annotations: { readOnlyHint: !tool.writes, destructiveHint: false, openWorldHint: false },
      },
      // The SDK has parsed the arguments with the same schema; callTool parses again (for callers that bypass it)
      // and turns every refusal into an `Error: …` tool result.
      (args: unknown) => callTool(tool, args, context),
    );
  }
  if (!resolved.writes)
    refuseWriteTools(server, new Set(MCP_TOOLS.filter((tool) => tool.writes).map((tool) => tool.name)));
  return server;
}

/**
 * An MCP server (the SDK's `McpServer`) whose tools read the store: `search_memory`, `read_turns_around`,
 * `read_session`, `list_sessions`, `list_facts`, `list_blocks`, `read_block`, and `write_block`, `forget_fact` and
 * `delete_fact` when `writes` is true. Connect it to a transport (`StdioServerTransport`,
 * `StreamableHTTPServerTransport`), or use {@link serveMcpStdio} / {@link startMcpHttp}. Needs `@modelcontextprotocol/sdk` (`MISSING_DEPENDENCY` saying so without it).
 */
export async function createMcpServer(options: McpServerOptions): Promise<McpServer> {
  return serverFor(resolveOptions(options));
}
