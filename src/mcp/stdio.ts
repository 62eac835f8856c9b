import { importOptional } from "../runtime/load.js";
import { LineTransport } from "./line-transport.js";
import type { McpServerOptions } from "./options.js";
import { createMcpServer } from "./server.js";
import type { StdioInput, StdioOutput } from "./stdio-streams.js";

export type { StdioInput, StdioOutput } from "./stdio-streams.js";

type TypesModule = typeof import("@modelcontextprotocol/sdk/types.js");

/**
 * Serves the store over stdio (what Claude Desktop and Claude Code start): JSON-RPC on `stdout`, so nothing else
 * may be written there. A line the server cannot take (over 10 MiB, not JSON) is answered with a JSON-RPC error
 * and told to `stderr` when given; the server reads on. Resolves when the client closes `stdin` or `stopped`
 * resolves.
 */
export async function serveMcpStdio(
  options: McpServerOptions,
  io: { stdin: StdioInput; stdout: StdioOutput; stderr?: StdioOutput; stopped?: Promise<void> },
): Promise<void> {
  const server = await createMcpServer(options);
  const { JSONRPCMessageSchema } = await importOptional<TypesModule>(
    "@modelcontextprotocol/sdk",
    "agent-session's MCP server",
    () => import("@modelcontextprotocol/sdk/types.js"),
  );
  const { stderr } = io;
  const transport = new LineTransport(io.stdin, io.stdout, {
    check: (value) => JSONRPCMessageSchema.safeParse(value),
    ...(stderr ? { report: (message: string) => stderr.write(`agent-session mcp: ${message}\n`) } : {}),
  });
  // The transport does not watch for the end of stdin: the client closing it is how a stdio server is told to go.
  const ended = new Promise<void>((resolve) => {
    io.stdin.once("end", () => resolve());
    io.stdin.once("close", () => resolve());
  });
  await server.connect(transport);
  try {
    await Promise.race([ended, ...(io.stopped ? [io.stopped] : [])]);
  } finally {
    await server.close();
  }
}
