import { intOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { UsageError } from "../errors.js";
import { requireTransfer } from "../inspect/sessions.js";
import { isLoopback } from "../serve/loopback.js";

/** The port `serve` uses when none is given. */
export const DEFAULT_PORT = 4646;

/** `serve`: the local, read-only web viewer. */
export const serve: Command = {
  name: "serve",
  summary: "open a local read-only web viewer",
  description:
    "Serves a web page listing the sessions; a session shows its branch tree as a graph (click a message to read " +
    "the branch ending there), its conversation with overlays marked and expandable to the original messages, the " +
    "facts learned from it (each source a link to its message), its context blocks and frozen prompt, and its usage; a search box searches every session. It only reads: there is " +
    "no endpoint that writes. It binds 127.0.0.1 (this machine only) unless --host says otherwise, and answers only " +
    "requests addressed to a local host name. --port 0 picks a free port. Stop it with Ctrl-C.",
  positionals: [],
  required: 0,
  options: {
    port: {
      type: "string",
      value: "<n>",
      description: `port to listen on (default ${DEFAULT_PORT}; 0 = any free port)`,
    },
    host: { type: "string", value: "<addr>", description: "interface to bind (default 127.0.0.1)" },
  },
  examples: ["agent-session serve", "agent-session serve --port 0 --json"],
  async run({ command, args, out, open, io, untilStopped }) {
    const port = intOption(command, args.values, "port", DEFAULT_PORT);
    if (port > 65535) throw new UsageError("--port must be at most 65535", command);
    const host = stringOption(args.values, "host") ?? "127.0.0.1";
    // "watch": the change log is on, so an open session follows writes from other processes live.
    const { store, location } = await open("watch");
    requireTransfer(store, "serve");
    const { startViewer } = await import("../serve/server.js");
    const viewer = await startViewer(store, { host, port, title: location });
    try {
      // One line either way, printed once listening, so scripts and tests can wait for it.
      if (out.json) await out.write(`${JSON.stringify({ url: viewer.url, database: location })}\n`);
      else await out.line(`agent-session viewer for ${location}: ${viewer.url} (read-only; Ctrl-C to stop)`);
      if (!isLoopback(host)) {
        io.stderr.write(`warning: listening on ${host}: anyone who can reach it can read every session\n`);
      }
      await untilStopped();
    } finally {
      await viewer.close();
    }
  },
};
