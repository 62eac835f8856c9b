import type { IncomingMessage, ServerResponse } from "node:http";
import { errorMessage } from "../errors.js";
import { importOptional } from "../runtime/load.js";
import { type McpServerOptions, resolveOptions } from "./options.js";
import { serverFor } from "./server.js";

type HttpModule = typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js");

/** Where {@link startMcpHttp} listens and how to stop it. */
export interface McpHttpServer {
  /** The endpoint, e.g. `http://127.0.0.1:4747/mcp`. */
  url: string;
  close(): Promise<void>;
}

/** Options of {@link startMcpHttp}: the server's, and where to listen. */
export interface McpHttpOptions extends McpServerOptions {
  /** Port (default 0: any free port; the result's `url` names it). */
  port?: number | undefined;
  /** Interface (default 127.0.0.1: this machine only). */
  host?: string | undefined;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * Serves the store over Streamable HTTP at `/mcp`, stateless: each POST gets its own server and transport (the
 * SDK's stateless pattern), so no client state is kept between requests. On a loopback interface, requests
 * addressed to any other host name are refused (DNS rebinding: a web page must not reach it through its own name).
 */
export async function startMcpHttp(options: McpHttpOptions): Promise<McpHttpServer> {
  const { port = 0, host = "127.0.0.1", ...serverOptions } = options;
  const resolved = resolveOptions(serverOptions);
  const { StreamableHTTPServerTransport } = await importOptional<HttpModule>(
    "@modelcontextprotocol/sdk",
    "agent-session's MCP server",
    () => import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
  );
  const { createServer } = await import("node:http");
  let allowedHosts: string[] | undefined;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== "POST") {
      // Stateless: no stream to resume (GET) and no session to end (DELETE).
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const server = await serverFor(resolved);
    const transport = new StreamableHTTPServerTransport({
      // No sessionIdGenerator: stateless, every request stands alone.
      enableJsonResponse: true,
      ...(allowedHosts === undefined ? {} : { allowedHosts, enableDnsRebindingProtection: true }),
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    // The SDK's own transport, typed without exactOptionalPropertyTypes (its `onclose?` is not `| undefined`).
    await server.connect(transport as unknown as Parameters<typeof server.connect>[0]);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A failure before the transport answered (the SDK missing, a closed store): a JSON-RPC error, not a hang.
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: errorMessage(error) }, id: null }),
        );
      } else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve());
  });
  const address = http.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  if (LOOPBACK.has(host)) {
    allowedHosts = [`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`];
  }
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/mcp`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
