/**
 * The media row: a conversation of 100 messages each carrying the same 1 MB image (a `file` part with a data
 * URL), appended and read back, next to the same conversation without images. Reports the bytes stored (the
 * image should be there once) and the history read time. Runs on SQLite (a temporary file) and the memory store.
 * `npm run bench:script bench/media.ts` alone, or `BENCH_ONLY=media npm run bench`.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type AttachmentCapableStore, hasAttachmentStore } from "../src/contract/attachments.js";
import type { SessionMessage } from "../src/contract/message.js";
import type { SessionStore } from "../src/contract/store.js";
import { MemoryStore } from "../src/memory/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { fmtDur, summarize } from "./stats.js";

const MESSAGES = 100;
const IMAGE_BYTES = 1_000_000;
const READS = 20;

function conversation(withImage: boolean): SessionMessage[] {
  const bytes = Buffer.alloc(IMAGE_BYTES);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24;
  const url = `data:image/png;base64,${bytes.toString("base64")}`;
  return Array.from({ length: MESSAGES }, (_, i) => {
    const parts: unknown[] = [{ type: "text", text: `message ${i}: what changed in this screenshot?` }];
    if (withImage) parts.push({ type: "file", mediaType: "image/png", url });
    return { id: `m${i}`, role: i % 2 === 0 ? "user" : "assistant", parts } as SessionMessage;
  });
}

async function measure(store: SessionStore, withImage: boolean) {
  const messages = conversation(withImage);
  const session = store.session("media");
  const start = performance.now();
  for (const message of messages) await session.appendMessage(message);
  const append = ((performance.now() - start) * 1000) / MESSAGES;
  const reads: number[] = [];
  let length = 0;
  for (let i = 0; i < READS; i++) {
    const t = performance.now();
    const history = await session.getHistory();
    reads.push((performance.now() - t) * 1000);
    length = history.length;
  }
  if (length !== MESSAGES) throw new Error(`read ${length} messages, expected ${MESSAGES}`);
  const stats = hasAttachmentStore(store)
    ? await (store as AttachmentCapableStore).attachments.stats()
    : null;
  return { append, read: summarize(reads), attachments: stats };
}

/** The Markdown section of the media benchmark. */
export async function benchMedia(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-media-"));
  const rows: string[] = [];
  try {
    for (const backend of ["sqlite", "memory"] as const) {
      const results = [];
      for (const withImage of [false, true]) {
        const file = join(dir, `${backend}-${withImage}.db`);
        const store = backend === "sqlite" ? new SqliteStore(file) : new MemoryStore();
        const r = await measure(store, withImage);
        await store.close();
        const disk = backend === "sqlite" ? statSync(file).size : null;
        results.push({ withImage, ...r, disk });
      }
      const base = results[0]!.read.p50;
      for (const r of results) {
        rows.push(
          `| ${backend} | ${r.withImage ? "1 MB image in every message" : "text only"} | ${fmtDur(r.append)} | ` +
            `${fmtDur(r.read.p50)} (${(r.read.p50 / base).toFixed(1)}×) | ` +
            `${r.attachments ? `${r.attachments.count} / ${(r.attachments.bytes / 1e6).toFixed(2)} MB` : "–"} | ` +
            `${r.disk === null ? "–" : `${(r.disk / 1e6).toFixed(2)} MB`} |`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `## Media: ${MESSAGES} messages, the same ${IMAGE_BYTES / 1e6} MB image in each`,
    "",
    "Append is the mean per message; history is the p50 of a full `getHistory()` (restoring every image, i.e.",
    `${MESSAGES} × ${((IMAGE_BYTES * 4) / 3 / 1e6).toFixed(2)} MB of base64) against the text-only conversation.`,
    "",
    "| backend | conversation | append / message | history read | payloads stored | file on disk |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) console.log(await benchMedia());
