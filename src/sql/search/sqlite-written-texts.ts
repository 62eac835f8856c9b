/**
 * The text of sealed rows this connection wrote and the search index does not hold yet, so the batch indexer
 * (indexing.ts) takes a row's words from its write instead of opening the row it has just sealed (an AES open and
 * a parse per row). An entry is used only while the row still holds the very content written with it: sealed
 * content is unique (a random nonce), so a row rewritten, re-sealed by a rotation, or written by another process
 * into a `seq` a rolled-back write had used is opened as before. The text is in this process's memory only, as
 * every opened message is (docs/PRIVACY.md, "Threat model": the running process is not protected).
 */
import type { SqlDriver } from "../engines/sqlite/driver.js";

// Two batches: rows another process indexes are dropped when this connection next indexes, and the cap bounds
// what is kept meanwhile.
const MAX_ROWS = 256;

interface WrittenText {
  content: string;
  text: string;
}

// Kept per engine connection, which every wrapper of a driver names as `handle` (the idle pass indexes through an
// inner one; family-cache.ts does the same); a driver that names none keys on itself.
const byConnection = new WeakMap<object, Map<number, WrittenText>>();

function connectionOf(driver: SqlDriver): object {
  return driver.handle ?? driver;
}

/** Keeps the text of the sealed row `seq` just written with `content`, until the batch that indexes it. */
export function noteWrittenText(driver: SqlDriver, seq: number, content: string, text: string): void {
  let rows = byConnection.get(connectionOf(driver));
  if (rows === undefined) {
    rows = new Map();
    byConnection.set(connectionOf(driver), rows);
  }
  rows.delete(seq);
  if (rows.size >= MAX_ROWS) rows.delete(rows.keys().next().value as number);
  rows.set(seq, { content, text });
}

/** The text written with row `seq` when the row still holds `content` (else undefined), and forgets it. */
export function takeWrittenText(driver: SqlDriver, seq: number, content: string): string | undefined {
  const rows = byConnection.get(connectionOf(driver));
  const written = rows?.get(seq);
  if (written === undefined) return undefined;
  rows!.delete(seq);
  return written.content === content ? written.text : undefined;
}

/** Forgets every row up to `seq` (the index holds them now, whoever indexed them). */
export function forgetWrittenTexts(driver: SqlDriver, seq: number): void {
  const rows = byConnection.get(connectionOf(driver));
  if (rows === undefined) return;
  for (const at of rows.keys()) if (at <= seq) rows.delete(at);
}
