// The SDK's own client, connected to an agent-session MCP server, and a call that returns the tool's text.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** A tool call's outcome: its one text item, and whether it is a tool error. */
export interface ToolText {
  text: string;
  isError: boolean;
}

/** A client connected over Streamable HTTP to `url`. */
export async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: "agent-session-test", version: "1.0.0" });
  // The SDK types its transports without exactOptionalPropertyTypes (`sessionId?: string` is not `| undefined`).
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport as unknown as Parameters<Client["connect"]>[0]);
  return client;
}

/** Calls a tool and returns its single text item (failing when the result holds anything else). */
export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolText> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  if (content.length !== 1 || content[0]?.type !== "text") {
    throw new Error(`${name} returned ${JSON.stringify(result)}`);
  }
  return { text: content[0].text, isError: result.isError === true };
}
