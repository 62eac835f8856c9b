// Runs s3rver in its own process for the S3 tests. It is a separate process because s3rver 3.7.1 signs ListObjectsV2
// continuation tokens with DES, which OpenSSL 3 only offers under --openssl-legacy-provider
// (https://github.com/jamhall/s3rver/issues/818); the flag should not leak into the test process itself.
// Usage: node --openssl-legacy-provider s3rver-process.mjs <directory>; prints {"port":N} once listening.
import S3rver from "s3rver";

const directory = process.argv[2];
if (!directory) {
  console.error("usage: s3rver-process.mjs <directory>");
  process.exit(2);
}
// Port 0: the OS picks a free port, so parallel test files never collide.
const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  await server.close().catch(() => undefined);
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
// The parent holds our stdin open; when it goes away (even killed), stdin ends and the server goes with it.
process.stdin.on("end", shutdown);
process.stdin.resume();
