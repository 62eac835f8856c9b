/**
 * A focused append benchmark for working on the append path: the floor and agent-session appending the same
 * messages round-robin into fresh files, interleaved in blocks so machine noise hits both alike.
 * Env: PROFILE_N (appends per target, default 20000), PROFILE_SESSIONS (default 100), PROFILE_DIR.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Session } from "../src/session/session.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { makeMessage, rng } from "./data.js";
import { FloorTarget } from "./floor.js";
import { nowUs, summarize } from "./stats.js";
import { removeDbFiles } from "./workloads.js";

const n = Number(process.env.PROFILE_N ?? "20000");
const sessions = Number(process.env.PROFILE_SESSIONS ?? "100");
const dir = process.env.PROFILE_DIR ?? join(process.cwd(), ".bench-data", "profile");
mkdirSync(dir, { recursive: true });

type Append = (sessionId: string, i: number) => Promise<unknown> | unknown;

const r = rng(7);
const messages = Array.from({ length: n }, (_, i) =>
  makeMessage(r, `m${i}`, i % 2 === 0 ? "user" : "assistant"),
);

function file(name: string): string {
  if (process.env.PROFILE_MEMORY) return ":memory:";
  const f = join(dir, `${name}.db`);
  removeDbFiles(f);
  return f;
}

const floor = new FloorTarget();
floor.open(file("floor"));
const store = new SqliteStore(file("store"));
const sessionStore = new SqliteStore(file("session"));
const sessionObjects = new Map<string, Session>();

const targets: Record<string, Append> = {
  floor: (sid, i) => floor.append(sid, messages[i]!),
  provider: (sid, i) => store.session(sid).appendMessage(messages[i]!),
  Session: (sid, i) => {
    let s = sessionObjects.get(sid);
    if (!s) {
      s = Session.create(sessionStore).forSession(sid);
      sessionObjects.set(sid, s);
    }
    return s.appendMessage(messages[i]!);
  },
};

const samples = new Map<string, number[]>(Object.keys(targets).map((k) => [k, []]));
const BLOCK = 500;
for (let start = 0; start < n; start += BLOCK) {
  for (const [name, append] of Object.entries(targets)) {
    const out = samples.get(name)!;
    for (let i = start; i < Math.min(n, start + BLOCK); i++) {
      const t0 = nowUs();
      await append(`s${i % sessions}`, i);
      out.push(nowUs() - t0);
    }
  }
}
const base = summarize(samples.get("floor")!.slice(1000));
for (const [name, s] of samples) {
  const x = summarize(s.slice(1000));
  console.log(
    `${name.padEnd(10)} mean ${x.mean.toFixed(1).padStart(6)} µs  p50 ${x.p50.toFixed(1).padStart(6)} µs  p99 ${x.p99.toFixed(1).padStart(7)} µs  (p50 ${(x.p50 / base.p50).toFixed(2)}x, mean ${(x.mean / base.mean).toFixed(2)}x floor)`,
  );
}
floor.close();
await store.close();
await sessionStore.close();
