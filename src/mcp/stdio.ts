import type { Readable, Writable } from "node:stream";
import { importOptional } from "../runtime/load.js";
import type { McpServerOptions } from "./options.js";
import { createMcpServer } from "./server.js";

type StdioModule = typeof import("@modelcontextprotocol/sdk/server/stdio.js");

/**
 * Serves the store over stdio (what Claude Desktop and Claude Code start): JSON-RPC on `stdout`, so nothing else
 * may be written there. Resolves when the client closes `stdin` or `stopped` resolves.
 */
export async function serveMcpStdio(
  options: McpServerOptions,
  io: { stdin: Readable; stdout: Writable; stopped?: Promise<void> },
): Promise<void> {
  const server = await createMcpServer(options);
  const { StdioServerTransport } = await importOptional<StdioModule>(
    "@modelcontextprotocol/sdk",
    "agent-session's MCP server",
    () => import("@modelcontextprotocol/sdk/server/stdio.js"),
  );
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  // The transport does not watch for the end of stdin: the client closing it is how a stdio server is told to go.
  const ended = new Promise<void>((resolve) => {
    io.stdin.once("end", resolve);
    io.stdin.once("close", resolve);
  });
  await server.connect(transport);
  try {
    await Promise.race([ended, ...(io.stopped ? [io.stopped] : [])]);
  } finally {
    await server.close();
  }
}
