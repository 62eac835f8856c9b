#!/usr/bin/env node
// The `agent-session` command. Everything lives in run.ts so tests and other programs can call it with their own
// streams; this file only wires the process to it.
import { run } from "./run.js";

// `agent-session export | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

// Signals are only caught once a command waits for them (serve); elsewhere Ctrl-C keeps its default meaning.
const untilStopped = () =>
  new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });

const code = await run(
  process.argv.slice(2),
  {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    stderrIsTTY: process.stderr.isTTY === true,
  },
  untilStopped,
);
process.exitCode = code;
// Every store is closed by now; should a driver still hold a handle open, do not hang the shell over it.
setTimeout(() => process.exit(code), 2000).unref();
