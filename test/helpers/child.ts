// Runs a TypeScript fixture in a child process (another "app instance" for cross-process tests).
import { spawn } from "node:child_process";

/** Runs `script` with tsx and `args`; resolves with its stdout, rejects with its exit code and stderr. */
export function runFixture(script: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${script} exited ${code}: ${stderr}`)),
    );
  });
}
