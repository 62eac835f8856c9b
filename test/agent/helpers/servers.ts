import { connect } from "node:net";

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
