import { importOptional } from "../runtime/load.js";
import type { McpServerOptions } from "./options.js";
import { createMcpServer } from "./server.js";

type StdioModule = typeof import("@modelcontextprotocol/sdk/server/stdio.js");
type Transport = ConstructorParameters<StdioModule["StdioServerTransport"]>;

type Listener = (...args: unknown[]) => void;

/**
 * What the stdio server needs of `stdin` (a Node `Readable`, e.g. `process.stdin`), stated here rather than as Node's
 * type so that the shipped declarations need no `@types/node` (a TypeScript 7 app loads none unless it asks).
 */
export interface StdioInput {
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  once(event: string, listener: Listener): unknown;
  listenerCount(event: string): number;
  pause(): unknown;
}

/** What the stdio server needs of `stdout` (a Node `Writable`, e.g. `process.stdout`). */
export interface StdioOutput {
  write(chunk: string): boolean;
  once(event: string, listener: Listener): unknown;
}

/**
 * Serves the store over stdio (what Claude Desktop and Claude Code start): JSON-RPC on `stdout`, so nothing else
 * may be written there. Resolves when the client closes `stdin` or `stopped` resolves.
 */
export async function serveMcpStdio(
  options: McpServerOptions,
  io: { stdin: StdioInput; stdout: StdioOutput; stopped?: Promise<void> },
): Promise<void> {
  const server = await createMcpServer(options);
  const { StdioServerTransport } = await importOptional<StdioModule>(
    "@modelcontextprotocol/sdk",
    "agent-session's MCP server",
    () => import("@modelcontextprotocol/sdk/server/stdio.js"),
  );
  // A Node stream is what both types describe; the SDK names Node's.
  const transport = new StdioServerTransport(
    io.stdin as unknown as Transport[0],
    io.stdout as unknown as Transport[1],
  );
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
