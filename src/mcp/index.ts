export { type McpHttpOptions, type McpHttpServer, startMcpHttp } from "./http.js";
export { DEFAULT_MCP_LIMITS, type McpServerOptions } from "./options.js";
export { createMcpServer, MCP_TOOLS } from "./server.js";
export { serveMcpStdio } from "./stdio.js";
export type { McpLimits, McpTool, ToolResult } from "./tool.js";
