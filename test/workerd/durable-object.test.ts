import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { bundleForWorkerd, WorkerdServer, workerdBinary } from "./harness.js";
import { BIG_CHARS, bytesProbe, IMAGE_URL } from "./shared.js";

// The sql-tag adapter inside a real Durable Object: workerd (the runtime Cloudflare deploys) with SQLite storage,
// no nodejs_compat. Skipped with a reason where the binary cannot run, except under CI.
const binary = workerdBinary();
const skip = "reason" in binary ? binary.reason : false;
if (skip && process.env.CI === "true") throw new Error(`CI must run the workerd test: ${skip}`);
if (skip) console.log(`# skipping the workerd tests: ${skip}`);

let server: WorkerdServer | undefined;
let compat: WorkerdServer | undefined;

before(async () => {
  if (skip || "reason" in binary) return;
  const { code } = await bundleForWorkerd(new URL("./worker.ts", import.meta.url).pathname);
  server = new WorkerdServer(binary.path, code);
  // Apps on Cloudflare's `agents` package usually enable nodejs_compat: the Node paths must work there too.
  compat = new WorkerdServer(binary.path, code, ["nodejs_compat"]);
  await Promise.all([server.start(), compat.start()]);
});

after(async () => {
  await Promise.all([server?.dispose(), compat?.dispose()]);
});

async function call(path: string, method = "GET", on = server!): Promise<Record<string, unknown>> {
  const response = await fetch(`${on.url}${path}`, { method });
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, 200, `${path}: ${String(body.error)}\n${on.output}`);
  return body;
}

test("a Session over a Durable Object's SQLite storage appends, branches, searches, compacts and uses blocks and tools", {
  skip,
}, async () => {
  const written = await call("/write", "POST");
  assert.deepEqual(written.branches, ["a2", "a2b"]);
  assert.ok((written.hits as string[]).includes("u1"));
  assert.match(String(written.toolResult), /^(?!Error)/);
  assert.match(String(written.prompt), /Likes dark roast\./);
  assert.ok((written.tools as string[]).includes("set_context"));
  assert.equal(written.imageOk, true, "the offloaded image reads back exactly");
  assert.equal(written.compacted, true);
  assert.ok((written.historyIds as string[]).includes("compaction"), String(written.historyIds));
  assert.equal(written.bigOk, true, "the 2.5 MB message reads back whole");
  assert.deepEqual(written.bigHits, ["a3"]);
});

test("the object's data survives a workerd restart, the message over 2 MB included", { skip }, async () => {
  await server!.stop();
  await server!.start();
  const read = await call("/read");
  assert.equal(read.leaf, "a3");
  assert.equal(read.bigLength, BIG_CHARS);
  assert.equal((read.historyIds as string[]).at(-1), "a3");
  assert.ok((read.historyIds as string[]).includes("compaction"));
  assert.deepEqual(read.branches, ["a2", "a2b"]);
  assert.ok((read.hits as string[]).includes("u2"), String(read.hits));
  assert.equal(read.memory, "Likes dark roast.");
  assert.match(String(read.prompt), /MEMORY \(Learned facts\)/);
  assert.equal(read.compactions, 1);
  assert.equal((read.image as { url?: string } | null)?.url, IMAGE_URL);
});

test("UTF-8, base64 and SHA-256 answer in workerd exactly as in Node", { skip }, async () => {
  // workerd has no Buffer or node:crypto here, so this compares the Web API / @noble/hashes paths with Node's.
  const answer = await call("/bytes");
  assert.deepEqual(answer.runtime, { Buffer: "undefined", process: "undefined" }, "no nodejs_compat");
  assert.deepEqual(answer.probe, JSON.parse(JSON.stringify(bytesProbe())));
});

test("with nodejs_compat the same object works on workerd's Buffer and node:crypto", { skip }, async () => {
  const written = await call("/write", "POST", compat);
  assert.equal(written.bigOk, true);
  assert.equal(written.imageOk, true);
  assert.equal(written.compacted, true);
  const answer = await call("/bytes", "GET", compat);
  assert.deepEqual(answer.runtime, { Buffer: "function", process: "object" });
  assert.deepEqual(answer.probe, JSON.parse(JSON.stringify(bytesProbe())));
});

test("the reference's tables, written in the object by the real agents@0.22.0, are adopted there and survive a restart", {
  skip,
}, async () => {
  type View = Record<string, unknown> & { histories: [string, string[]][] };
  const { snap, report, ours } = (await call("/adopt", "POST")) as {
    snap: View & { forkId: string };
    report: Record<string, unknown> & { messages: object; rejected: { id: string }[] };
    ours: View;
  };
  assert.deepEqual(report.messages, { inserted: 10, skipped: 0 });
  assert.equal(report.verified, 10 + 1 + 2 + 2 + 2);
  assert.equal(report.differingCount, 0);
  assert.deepEqual(
    report.rejected.map((r) => r.id),
    ["compaction_bogus"],
  );
  // What the reference read back is what ours reads back (the reserved id stays behind; its child hangs under its
  // parent).
  const expected = {
    ...snap,
    histories: snap.histories.map(([id, history]) =>
      id === snap.forkId ? [id, history.filter((m) => m !== "compaction_bogus")] : [id, history],
    ),
  };
  for (const key of [
    "sessions",
    "histories",
    "chat",
    "branchesOfFirst",
    "compactions",
    "blocks",
    "prompt",
    "notesSearch",
  ]) {
    assert.deepEqual(ours[key], expected[key as keyof typeof expected], key);
  }
  assert.deepEqual(ours.search, ["u1"]);

  await server!.stop();
  await server!.start();
  const again = (await call("/adopt")) as { adopted: unknown; ours: View };
  assert.equal(again.adopted, null, "recorded: adoption does not run again");
  assert.deepEqual(again.ours, ours);
});
