/**
 * Per-append cost of the store-backed agent storages: AGENT_BENCH_N appends (default 1000) of one ~600-byte
 * assistant message (AGENT_BENCH_MESSAGES > 1: that many, an assistant tool call then tool results, as one model
 * step with tools appends them) and one ledger entry to a fresh session, on SQLite (a file) or Postgres (AGENT_SESSION_PG_URL).
 * Prints one JSON line with the median and p90 in ms. `AGENT_BENCH_SRC` points at another checkout's `src` to
 * measure an older version the same way (run the two interleaved: the machine is shared).
 * Usage: npm run bench:script bench/agent-append.ts sqlite|postgres
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const backend = process.argv[2] ?? "sqlite";
const n = Number(process.env.AGENT_BENCH_N ?? "1000");
const perStep = Number(process.env.AGENT_BENCH_MESSAGES ?? "1");
const src = resolve(process.env.AGENT_BENCH_SRC ?? join(import.meta.dirname, "..", "src"));
const agent = await import(pathToFileURL(join(src, "agent", "index.ts")).href);

const dir = mkdtempSync(join(tmpdir(), "agent-append-"));
const storage =
  backend === "postgres"
    ? new agent.PostgresSessionStorage(
        process.env.AGENT_SESSION_PG_URL ?? "postgres://127.0.0.1:5432/postgres",
      )
    : new agent.SQLiteSessionStorage(join(dir, "bench.sqlite"));

const id = `bench-${process.pid}-${Date.now()}`;
const now = Date.now();
await storage.save({
  id,
  messages: [],
  usage: { entries: [] },
  metadata: { title: "bench" },
  createdAt: now,
  updatedAt: now,
});
const text = "lorem ipsum dolor sit amet ".repeat(22); // ~600 bytes
const times: number[] = [];
for (let i = 0; i < n; i++) {
  const message = { id: `m${i}`, role: "assistant", content: [{ type: "text", text }], createdAt: now + i };
  const messages: object[] = [message];
  for (let k = 1; k < perStep; k++) {
    const call = { type: "tool-call", toolCallId: `c${i}-${k}`, toolName: "lookup", input: { q: "x" } };
    message.content.push(call as unknown as (typeof message.content)[number]);
    const output = { type: "text", value: text };
    const result = { type: "tool-result", toolCallId: call.toolCallId, toolName: "lookup", output };
    messages.push({ id: `m${i}-${k}`, role: "tool", content: [result], createdAt: now + i });
  }
  const usage = [
    {
      kind: "step",
      turn: i + 1,
      step: 0,
      model: "bench:model",
      at: now + i,
      inputTokens: 100,
      outputTokens: 20,
    },
  ];
  const start = performance.now();
  await storage.appendMessages(id, messages, { updatedAt: now + i, usage });
  times.push(performance.now() - start);
}
const loaded = await storage.load(id);
if (loaded?.messages.length !== n * perStep)
  throw new Error(`loaded ${loaded?.messages.length} messages, expected ${n * perStep}`);
await storage.delete(id);
await storage.close();
rmSync(dir, { recursive: true, force: true });
times.sort((a, b) => a - b);
const at = (q: number) => Number(times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3));
console.log(
  JSON.stringify({
    backend,
    src: process.env.AGENT_BENCH_SRC ? "other" : "this",
    n,
    messagesPerAppend: perStep,
    p50: at(0.5),
    p90: at(0.9),
  }),
);
