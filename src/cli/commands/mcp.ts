import { intOption, OWNER_OPTION, ownerOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { requireOwnerKeyring } from "../keyring.js";

/** `mcp`: the store as an MCP server (stdio, or Streamable HTTP on this machine). */
export const mcp: Command = {
  name: "mcp",
  summary: "serve the store to MCP clients (Claude Desktop, Claude Code, …)",
  description:
    "Runs an MCP server over the database: ranked recall across sessions (search_memory, with the filters of " +
    "'search'), the turns around a hit, a session's history in pages, the session list, learned facts (list_facts), " +
    "and context blocks. Every tool only reads unless --writes adds write_block, forget_fact and delete_fact. --owner keeps to one owner's sessions: another " +
    "owner's are not found; an encrypted owner needs the app's keyring (--keyring or --master-key-file). Outputs are bounded, with a marker saying how to read on. By default it speaks MCP " +
    "on stdin/stdout (what a client starts); --http PORT serves Streamable HTTP at http://127.0.0.1:PORT/mcp " +
    "instead (0 = any free port), answering only requests addressed to a local host name. See docs/MCP.md.",
  positionals: [],
  required: 0,
  options: {
    owner: OWNER_OPTION,
    writes: {
      type: "boolean",
      description: "offer write_block, forget_fact and delete_fact (default: read-only)",
    },
    http: {
      type: "string",
      value: "<port>",
      description: "serve Streamable HTTP on 127.0.0.1 instead of stdio",
    },
  },
  examples: [
    "agent-session mcp --db ./chat.db",
    "agent-session mcp --db ./chat.db --owner user-42 --writes",
    "agent-session mcp --db ./chat.db --owner user-42 --keyring ./keyring.mjs",
    "agent-session mcp --db postgres://localhost/app --http 4747",
  ],
  async run({ command, args, out, io, open, untilStopped, keyring }) {
    const owner = ownerOption(command, args.values);
    const http =
      stringOption(args.values, "http") === undefined
        ? undefined
        : intOption(command, args.values, "http", 0);
    if (http !== undefined && http > 65535)
      throw new UsageError("--http must be a port, at most 65535", command);
    const writes = args.values.writes === true;
    const opened = await open("read");
    const { store, location } = opened;
    // Every tool of an encrypted owner would fail or find nothing without the keyring: refused before serving.
    await requireOwnerKeyring(opened, owner, keyring);
    const options = { store, writes, ...(owner === undefined ? {} : { owner }) };
    const { serveMcpStdio, startMcpHttp } = await import("../../mcp/index.js");
    const scope = `${writes ? "read-write" : "read-only"}${owner === undefined ? "" : `, owner ${owner}`}`;
    if (http === undefined) {
      // stdout carries the protocol: the note goes to stderr, which clients show in their logs.
      io.stderr.write(`agent-session MCP server on stdio for ${location} (${scope})\n`);
      await serveMcpStdio(options, {
        stdin: io.stdin,
        stdout: io.stdout,
        stderr: io.stderr,
        stopped: untilStopped(),
      });
      return;
    }
    const server = await startMcpHttp({ ...options, port: http });
    try {
      // One line, printed once listening, so scripts and tests can wait for it.
      if (out.json) await out.write(`${JSON.stringify({ url: server.url, database: location })}\n`);
      else
        await out.line(`agent-session MCP server for ${location}: ${server.url} (${scope}; Ctrl-C to stop)`);
      await untilStopped();
    } finally {
      await server.close();
    }
  },
};
