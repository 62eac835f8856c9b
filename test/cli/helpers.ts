// Runs the real `agent-session` CLI in child processes, as a user's shell would.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The CLI's entry point (TypeScript, loaded through tsx like `npm run cli`). */
export const CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
// An absolute loader URL, so the CLI also runs from a temporary working directory.
const TSX = import.meta.resolve("tsx");
// The CLI bundled by `npm test` (scripts/test.mjs), which spawns much faster than the sources through tsx.
const BUNDLE = process.env.AGENT_SESSION_TEST_CLI;

/** The node arguments that start the CLI: the test run's bundle, or the sources through tsx (`source`: always). */
export function cliArgs(source = false): string[] {
  return BUNDLE && !source ? ["--enable-source-maps", BUNDLE] : ["--import", TSX, CLI];
}

/** What a finished CLI process printed and returned. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of one CLI run. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** Runs the TypeScript sources through tsx, as `npm run cli` does, even when the test run bundled the CLI. */
  source?: boolean;
}

function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // A developer's own default database must not leak into the tests.
  const { AGENT_SESSION_DB: _ignored, ...env } = process.env;
  return { ...env, NO_COLOR: "1", ...extra };
}

/** Spawns `agent-session <args>` and waits for it to exit. */
export async function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [...cliArgs(options.source), ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: childEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? "");
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

/** A running `agent-session serve`; `stop()` sends SIGTERM and waits for the exit code. */
export interface ServeProcess {
  url: string;
  child: ChildProcessWithoutNullStreams;
  stop(): Promise<number | null>;
}

/** Starts `agent-session serve --port 0 --json` and resolves with its URL once it listens. */
export async function startServe(db: string, extra: readonly string[] = []): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [...cliArgs(), "serve", "--db", db, "--port", "0", "--json", ...extra],
    {
      env: childEnv(),
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const line = buffered.split("\n")[0];
      if (buffered.includes("\n") && line) resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** A fresh temporary directory and a function that removes it. */
export function tempDir(prefix = "agent-session-cli-"): {
  dir: string;
  path(name: string): string;
  remove(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    path: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Parses stdout as JSON, with the output in the message when it is not JSON. */
export function parseJson<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}): ${result.stdout}\nstderr: ${result.stderr}`);
  }
}
