import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";

/** A running s3rver on loopback with one bucket, and an S3 client pointed at it. */
export interface S3Server {
  bucket: string;
  config: S3ClientConfig;
  client: S3Client;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL("./s3rver-process.mjs", import.meta.url));

function waitForPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => reject(new Error("s3rver did not start within 15 s")), 15_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const line = buffered.split("\n")[0];
      if (buffered.includes("\n") && line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited before listening (code ${code})`));
    });
  });
}

/** Starts s3rver on 127.0.0.1 (a free port) over a fresh temp directory and creates `bucket`. */
export async function startS3Server(bucket = "agent-skills"): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), "agent-session-s3rver-"));
  const child = spawn(process.execPath, ["--openssl-legacy-provider", SCRIPT, directory], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let client: S3Client | undefined;
  const stop = async () => {
    client?.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    const port = await waitForPort(child);
    const config: S3ClientConfig = {
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      region: "us-east-1",
      // s3rver accepts any signature by default; the SDK just needs something to sign with.
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    };
    client = new S3Client(config);
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    return { bucket, config, client, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
