// Without writes the write tools are not registered (clients do not list them), so the SDK would answer a call to
// one "Tool write_block not found", which reads like a typo. This names the switch instead.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolResult } from "./tool.js";

type Handler = (request: { params?: { name?: unknown } }, extra: unknown) => Promise<unknown>;

/** The tool error a call to write tool `name` gets from a server started without writes. */
export function writesOffResult(name: string): ToolResult {
  return {
    content: [
      {
        type: "text",
        text: `Error: ${name} changes the store, and this server only reads: start it with --writes (writes: true in createMcpServer) to offer ${name}.`,
      },
    ],
    isError: true,
  };
}

/**
 * Answers calls to `names` (the write tools, left unregistered) with {@link writesOffResult}; every other call goes
 * to the SDK's own handler. The SDK has no public way to read a handler back, so its request map is wrapped; an SDK
 * without that map keeps its own "not found" answer, which is still a tool error.
 */
export function refuseWriteTools(server: McpServer, names: ReadonlySet<string>): void {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const sdk = handlers?.get("tools/call");
  if (!handlers || !sdk) return;
  handlers.set("tools/call", (request, extra) => {
    const name = request.params?.name;
    return typeof name === "string" && names.has(name)
      ? Promise.resolve(writesOffResult(name))
      : sdk(request, extra);
  });
}
