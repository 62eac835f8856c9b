// What `PRAGMA secure_delete = ON` (set when a SQLite store opens) costs appends and deletes, and what a purge
// takes: the same workload with the pragma OFF and ON, alternated in one process (docs/PERFORMANCE.md, "Secure
// delete"). Run: node --import tsx bench/secure-delete.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../src/manager/manager.js";
import { SqliteStore } from "../src/sqlite/store.js";

const SESSION = 10_000;
const TIMED = 2_000;
const dir = mkdtempSync(join(tmpdir(), "agent-session-secure-delete-"));
const text = (i: number) => `message ${i} ${"some words of an everyday message ".repeat(14)}`;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return {
    mean: mean * 1000,
    p50: s[Math.floor(s.length / 2)]! * 1000,
    p99: s[Math.floor(s.length * 0.99)]! * 1000,
  };
};

async function run(mode: "OFF" | "ON", round: number) {
  const path = join(dir, `${mode}-${round}.db`);
  const store = new SqliteStore(path);
  store.driver.run(`PRAGMA secure_delete = ${mode}`);
  const m = new SessionManager(store);
  const big = await m.create("big");
  const s = store.session(big.id);
  for (let i = 0; i < SESSION; i++)
    await s.appendMessage({ id: `m${i}`, role: "user", parts: [{ type: "text", text: text(i) }] });
  const appends: number[] = [];
  for (let i = 0; i < TIMED; i++) {
    const t = performance.now();
    await s.appendMessage({ id: `t${i}`, role: "user", parts: [{ type: "text", text: text(i) }] });
    appends.push(performance.now() - t);
  }
  await store.searchMessages("everyday"); // indexes what is pending, so deletes remove index rows too
  let t = performance.now();
  await m.deleteMessages(
    big.id,
    Array.from({ length: 100 }, (_, i) => `t${i * 10}`),
  );
  const deleteMessages = performance.now() - t;
  const other = await m.create("other");
  for (let i = 0; i < 1000; i++)
    await m.append(other.id, { id: `o${i}`, role: "user", parts: [{ type: "text", text: text(i) }] });
  await store.searchMessages("everyday");
  t = performance.now();
  await m.delete(other.id);
  const deleteSession = performance.now() - t;
  const purge = await store.purge();
  await store.close();
  rmSync(path, { force: true });
  return {
    mode,
    append: stats(appends),
    deleteMessages100Ms: deleteMessages,
    deleteSession1000Ms: deleteSession,
    purgeMs: purge.ms,
  };
}

for (let round = 0; round < 2; round++) {
  for (const mode of ["OFF", "ON"] as const) console.log(JSON.stringify(await run(mode, round)));
}
rmSync(dir, { recursive: true, force: true });
