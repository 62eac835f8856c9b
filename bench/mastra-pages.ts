import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../src/sqlite/store.js";
import { rng } from "./data.js";
import { benchThread, benchTurn } from "./mastra-data.js";
import { mdTable } from "./stats.js";

const WARM = Number(process.env.MASTRA_PAGES_WARM ?? 400);
const TURNS = Number(process.env.MASTRA_PAGES_TURNS ?? 50);

// The page numbers of every frame of a write-ahead log (a page written twice counts twice, as the log holds it).
function walPages(file: string): number[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return [];
  }
  if (bytes.length < 32) return [];
  const pageSize = bytes.readUInt32BE(8);
  const pages: number[] = [];
  for (let at = 32; at + 24 + pageSize <= bytes.length; at += 24 + pageSize)
    pages.push(bytes.readUInt32BE(at));
  return pages;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mastra-pages-"));
  const file = join(dir, "store.db");
  const store = new SqliteStore(file);
  const { memory, threadId } = await benchThread(store);
  const next = rng(7);
  let i = 0;
  for (; i < WARM; i += 2) await memory.saveMessages({ messages: benchTurn(next, threadId, i) });
  const byName = new Map<string, number>();
  let frames = 0;
  for (let turn = 0; turn < TURNS; turn++, i += 2) {
    store.driver.all("PRAGMA wal_checkpoint(TRUNCATE)");
    await memory.saveMessages({ messages: benchTurn(next, threadId, i) });
    const pages = walPages(`${file}-wal`);
    frames += pages.length;
    const names = new Map(
      store.driver
        .all<{ name: string; pageno: number }>("SELECT name, pageno FROM dbstat")
        .map((r) => [r.pageno, r.name]),
    );
    for (const page of pages) {
      const name = names.get(page) ?? (page === 1 ? "(page 1: header, schema)" : "(free or new)");
      byName.set(name, (byName.get(name) ?? 0) + 1);
    }
  }
  const rows = [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => [name, (n / TURNS).toFixed(2)]);
  rows.push(["all", (frames / TURNS).toFixed(2)]);
  console.log(`WAL frames a save of a turn, messages ${WARM}–${i} (${TURNS} saves)\n`);
  console.log(mdTable(["b-tree", "frames a save"], rows));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
