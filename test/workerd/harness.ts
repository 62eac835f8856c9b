import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { build, type Metafile } from "esbuild";

const require = createRequire(import.meta.url);

/** The workerd binary of the installed `workerd` package, or the reason there is none. */
export function workerdBinary(): { path: string } | { reason: string } {
  try {
    return { path: (require("workerd") as { default: string }).default };
  } catch (error) {
    return { reason: `the workerd binary is not installed here (${(error as Error).message})` };
  }
}

/**
 * Bundles `entry` as a Worker would be: ESM, platform neutral, the `workerd`/`worker` export conditions, nothing
 * external, so any `node:` import reachable from it fails the build.
 */
export async function bundleForWorkerd(entry: string): Promise<{ code: string; metafile: Metafile }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "import"],
    mainFields: ["module", "main"],
    target: "es2022",
    metafile: true,
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild produced no output for ${entry}`);
  return { code: output.text, metafile: result.metafile };
}

const COMPATIBILITY_DATE = "2025-12-01";

function config(storageDir: string, flags: readonly string[]): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "do-storage", disk = (path = ${JSON.stringify(storageDir)}, writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = ${JSON.stringify(flags)},
  durableObjectNamespaces = [(className = "SessionObject", uniqueKey = "agent-session-workerd-test", enableSql = true)],
  durableObjectStorage = (localDisk = "do-storage"),
  bindings = [(name = "SESSIONS", durableObjectNamespace = "SessionObject")],
);
`;
}

/** A workerd process serving the bundled Worker, its Durable Object data kept in a directory across restarts. */
export class WorkerdServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), "agent-session-workerd-"));
  private stderr = "";
  url = "";

  constructor(
    private readonly binary: string,
    code: string,
    /** Compatibility flags; none by default, so the library must run on Web APIs alone. */
    flags: readonly string[] = [],
  ) {
    writeFileSync(join(this.dir, "worker.js"), code);
    writeFileSync(join(this.dir, "config.capnp"), config(join(this.dir, "storage"), flags));
    // workerd refuses a localDisk directory that does not exist.
    mkdirSync(join(this.dir, "storage"));
  }

  /** Starts workerd and waits until it listens (the port comes from its control channel, fd 3). */
  async start(): Promise<void> {
    this.stderr = "";
    const child = spawn(
      this.binary,
      ["serve", join(this.dir, "config.capnp"), "--control-fd=3", "--experimental"],
      {
        stdio: ["ignore", "pipe", "pipe", "pipe"],
      },
    );
    this.child = child;
    // A test process that dies before dispose() must not leave workerd running.
    const kill = () => child.kill("SIGKILL");
    process.once("exit", kill);
    child.once("exit", () => process.off("exit", kill));
    child.stdout?.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    const control = child.stdio[3] as NodeJS.ReadableStream;
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: control });
      const timer = setTimeout(
        () => reject(new Error(`workerd did not start in 30 s:\n${this.stderr}`)),
        30_000,
      );
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`workerd exited with ${code}:\n${this.stderr}`));
      });
      lines.on("line", (line) => {
        const event = JSON.parse(line) as { event?: string; socket?: string; port?: number };
        if (event.event === "listen" && event.socket === "http" && typeof event.port === "number") {
          clearTimeout(timer);
          resolve(event.port);
        }
      });
    });
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Output workerd printed (for failure messages). */
  get output(): string {
    return this.stderr;
  }

  /** Stops workerd (the object's SQLite files stay for the next start). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }

  /** Stops workerd and deletes its files. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
