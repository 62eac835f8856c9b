/**
 * What the model reads from `session_search` with context, on the recall bench's LoCoMo store (SQLite): each
 * question as written, 10 hits as the tool asks, 0–2 turns of context. Reports the search's latency with the
 * context read, and the output's length as the tool prints it (overlapping hits share a block, each turn once)
 * against a stretch per hit (the same hits formatted one by one).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSessionHits, TOOL_LIMIT } from "../src/manager/search-tools.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { type Conversation, seedConversations } from "./locomo.js";
import { fmtDur, mdTable, summarize } from "./stats.js";

/** Runs the workload on `data` and returns its Markdown subsection. */
export async function benchToolOutput(
  data: readonly Conversation[],
  questionsOf: (conv: Conversation) => { question: string }[],
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "bench-tool-output-"));
  const store = new SqliteStore(join(dir, "tool.db"));
  const rows: string[][] = [];
  try {
    await seedConversations(store, data);
    for (const context of [0, 1, 2]) {
      const latency: number[] = [];
      let merged = 0;
      let separate = 0;
      let blocks = 0;
      let questions = 0;
      for (const conv of data) {
        for (const { question } of questionsOf(conv)) {
          const start = performance.now();
          const hits = await store.searchMessages(question, {
            sessionId: conv.conv,
            limit: TOOL_LIMIT,
            context,
          });
          latency.push((performance.now() - start) * 1000);
          const out = formatSessionHits(hits, question) ?? "";
          merged += out.length;
          blocks += out === "" ? 0 : out.split("\n---\n").length;
          separate += hits.map((hit) => formatSessionHits([hit], question) ?? "").join("\n---\n").length;
          questions++;
        }
      }
      const s = summarize(latency);
      const mean = (n: number) => Math.round(n / Math.max(1, questions)).toLocaleString("en-US");
      rows.push([
        String(context),
        fmtDur(s.p50),
        fmtDur(s.p99),
        `${mean(merged)} chars, ${(blocks / Math.max(1, questions)).toFixed(1)} blocks`,
        `${mean(separate)} chars`,
        `${(100 * (1 - merged / Math.max(1, separate))).toFixed(0)} %`,
      ]);
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const header = ["context", "search p50", "p99", "session_search output", "a stretch per hit", "shorter by"];
  return `\n### session_search with context (SQLite, ${TOOL_LIMIT} hits per question)\n\n${mdTable(header, rows)}\n`;
}
