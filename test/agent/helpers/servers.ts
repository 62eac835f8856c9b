import assert from "node:assert/strict";
import { connect } from "node:net";
import { test } from "node:test";
import { postgresSwitchedOff } from "../../fixtures/postgres-db.js";

/** True when a TCP connection to host:port opens within the timeout. */
export function reachable(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * How a suite that needs a server runs: `run` when it answers; otherwise skipped with a printed reason, except under
 * CI=true, where a missing server is a failure rather than a silently green build.
 */
export async function serverGate(
  label: string,
  host: string,
  port: number,
): Promise<"run" | "skip" | "fail"> {
  if (await reachable(host, port)) return "run";
  if (process.env.CI === "true") return "fail";
  console.log(
    `# skipping ${label} tests: nothing answers on ${host}:${port} (set CI=true to make this a failure)`,
  );
  return "skip";
}

/**
 * The `skip` option of tests that need a server: false when it answers, else the reason. Under CI=true a missing
 * server also declares a failing test, so the skips never pass a build silently.
 */
export async function serverSkip(label: string, host: string, port: number): Promise<string | false> {
  const off = port === 5432 ? postgresSwitchedOff() : null;
  if (off) {
    console.log(`# skipping ${label} tests: ${off}`);
    return off;
  }
  const gate = await serverGate(label, host, port);
  if (gate === "fail") {
    test(`${label} must be reachable on ${host}:${port} under CI`, () => {
      assert.fail(`CI=true and nothing answers on ${host}:${port}`);
    });
  }
  return gate === "run" ? false : `${label} is not reachable on ${host}:${port}`;
}
