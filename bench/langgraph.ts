/**
 * LangGraph checkpointers side by side, in one run (docs/PERFORMANCE.md, "LangGraph checkpointers"): a real
 * `StateGraph` over `MessagesAnnotation` whose one node calls a fake chat model (`FakeListChatModel`), compiled once
 * per saver: `AgentSessionSaver` on a SQLite file and on Postgres, LangGraph's `SqliteSaver` and `PostgresSaver`. A
 * turn is one `invoke` (a user message in, the model's reply out: two messages; the graph reads the latest
 * checkpoint, then puts three and their writes). Turns are interleaved (turn i on every saver, in a rotating order)
 * so load hits all alike. Per turn: the wall times of the saver's `put` and `putWrites` calls the graph made, summed
 * (LangGraph does not always await one before the next, so the sum can pass the `invoke`), and of the whole
 * `invoke`. At each size: `getTuple` of the latest, `list` of 100, and the thread's bytes on disk; once every size was
 * measured, put + putWrites called directly (no graph) with a messages list of each size.
 * Env: LG_BENCH_MESSAGES (thread length, default 1000), LG_BENCH_AT (sizes measured, default 100,500,1000),
 * LG_BENCH_WORDS (words a message, default 50: ~330 bytes of text), LG_BENCH_READS (getTuple calls a size, default
 * 10), LG_BENCH_LISTS (lists a size, default 1: a list of 100 at 1,000 messages opens 100 copies of the list, seconds
 * on every saver), LG_BENCH_DIRECT (direct put + putWrites pairs a size, default 10), LG_BENCH_ENGINES
 * (sqlite,postgres). About 7 minutes on a loaded 2-core machine, most of it the last turns and lists:
 * LG_BENCH_MESSAGES=500 takes about a quarter.
 * Run: npm run bench:script bench/langgraph.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { makeText, rng } from "./data.js";
import { type LangGraphTarget, postgresTargets, sqliteTargets } from "./langgraph-targets.js";
import { fmtDur, fmtNum, mdTable, nowUs, summarize } from "./stats.js";

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const list = (name: string, fallback: string) =>
  (process.env[name] ?? fallback)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const MESSAGES = num("LG_BENCH_MESSAGES", 1000);
const AT = list("LG_BENCH_AT", "100,500,1000")
  .map(Number)
  .filter((n) => n <= MESSAGES);
const WORDS = num("LG_BENCH_WORDS", 50);
const READS = num("LG_BENCH_READS", 10);
const LISTS = num("LG_BENCH_LISTS", 1);
const DIRECT = num("LG_BENCH_DIRECT", 10);
const ENGINES = new Set(list("LG_BENCH_ENGINES", "sqlite,postgres"));
const TURNS = Math.floor(MESSAGES / 2);
const WINDOW = Math.max(1, Math.min(50, Math.floor(TURNS / 10)));

const progress = (msg: string) =>
  process.stderr.write(`[langgraph ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** A target with its compiled graph and what its turns measured. */
interface Run {
  target: LangGraphTarget;
  label: string;
  graph: { invoke(input: unknown, config: unknown): Promise<unknown> };
  saverUs: number[];
  invokeUs: number[];
  calls: { put: number; putWrites: number };
  empty: number;
  at: Map<number, { getTuple: number; list: number; bytes: number }>;
  direct: Map<number, number>;
}

/** Counts and times the saver's `put` and `putWrites` calls (their wall time, summed per turn). */
function timeWrites(run: Run, spent: { us: number }): void {
  const saver = run.target.saver as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of ["put", "putWrites"] as const) {
    const original = saver[method]!.bind(saver);
    saver[method] = async (...args: unknown[]) => {
      run.calls[method]++;
      const t0 = nowUs();
      try {
        return await original(...args);
      } finally {
        spent.us += nowUs() - t0;
      }
    };
  }
}

function compile(target: LangGraphTarget, replies: string[]): Run["graph"] {
  const model = new FakeListChatModel({ responses: replies });
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: target.saver }) as unknown as Run["graph"];
}

const THREAD = { configurable: { thread_id: "bench-thread" } };

/** p50 of `reps` calls of `fn` on every run, interleaved (call i on each run before call i + 1). */
async function interleaved(runs: Run[], reps: number, fn: (r: Run) => Promise<unknown>): Promise<number[]> {
  const samples = runs.map(() => [] as number[]);
  for (let i = 0; i < reps; i++) {
    for (const [k, run] of runs.entries()) {
      const t0 = nowUs();
      await fn(run);
      samples[k]!.push(nowUs() - t0);
    }
  }
  return samples.map((s) => summarize(s).p50);
}

async function measureAt(runs: Run[], messages: number): Promise<void> {
  progress(`${fmtNum(messages)} messages: getTuple ×${READS}, list of 100 ×${LISTS}, sizes`);
  const getTuple = await interleaved(runs, READS, (r) => r.target.saver.getTuple(THREAD));
  const listed = await interleaved(runs, LISTS, async (r) => {
    let n = 0;
    for await (const _ of r.target.saver.list(THREAD, { limit: 100 })) n++;
    if (n !== Math.min(100, r.calls.put)) throw new Error(`${r.label}: list returned ${n} checkpoints`);
  });
  for (const [k, run] of runs.entries()) {
    const bytes = (await run.target.size()) - run.empty;
    run.at.set(messages, { getTuple: getTuple[k]!, list: listed[k]!, bytes });
  }
}

/**
 * put + putWrites called directly, no graph around them: on a thread of its own (`direct-<n>`, deleted after, once
 * every size was measured), checkpoints whose messages channel holds n − DIRECT + i of the thread's messages, each
 * put then one message written; p50 of the pairs after the first (the first stores the list whole in every saver).
 */
async function measureDirect(runs: Run[], all: BaseMessage[], n: number): Promise<void> {
  const samples = runs.map(() => [] as number[]);
  const configs = runs.map(() => ({ configurable: { thread_id: `direct-${n}`, checkpoint_ns: "" } }));
  for (let i = 0; i <= DIRECT; i++) {
    const messages = all.slice(0, n - DIRECT + i);
    for (const [k, run] of runs.entries()) {
      const checkpoint = emptyCheckpoint();
      checkpoint.id = uuid6(-1);
      checkpoint.channel_values = { messages };
      checkpoint.channel_versions = { messages: i + 1 };
      const t0 = nowUs();
      const metadata = { source: "loop" as const, step: i, parents: {} };
      const config = await run.target.saver.put(configs[k]!, checkpoint, metadata, { messages: i + 1 });
      await run.target.saver.putWrites(config, [["messages", [all[n - DIRECT + i]]]], `task-${i}`);
      if (i > 0) samples[k]!.push(nowUs() - t0);
      configs[k] = config as (typeof configs)[number];
    }
  }
  for (const [k, run] of runs.entries()) {
    run.direct.set(n, summarize(samples[k]!).p50);
    await run.target.saver.deleteThread(`direct-${n}`);
  }
}

/** The conversation as plain JSON ({id, role, content} a message) and as the saver's serializer writes the list. */
async function rawSizes(run: Run): Promise<{ plain: number; serialized: number }> {
  const tuple = await run.target.saver.getTuple(THREAD);
  const messages = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
  const plain = JSON.stringify(messages.map((m) => ({ id: m.id, role: m.getType(), content: m.content })));
  const [, serialized] = await run.target.saver.serde.dumpsTyped(messages);
  return { plain: Buffer.byteLength(plain), serialized: serialized.length };
}

const mib = (bytes: number) => `${fmtNum(bytes / 2 ** 20)} MiB`;
const p50 = (xs: number[]) => summarize(xs).p50;

function report(runs: Run[], raw: Map<number, { plain: number; serialized: number }>): string {
  const head = ["", ...runs.map((r) => r.label)];
  const first = (xs: number[]) => xs.slice(0, WINDOW);
  const last = (xs: number[]) => xs.slice(-WINDOW);
  const steps = [
    [
      `put + putWrites, p50, turns 1–${WINDOW} (2–${2 * WINDOW} messages)`,
      ...runs.map((r) => fmtDur(p50(first(r.saverUs)))),
    ],
    [
      `put + putWrites, p50, last ${WINDOW} turns (to ${fmtNum(2 * TURNS)} messages)`,
      ...runs.map((r) => fmtDur(p50(last(r.saverUs)))),
    ],
    ["growth, last ÷ first", ...runs.map((r) => `${fmtNum(p50(last(r.saverUs)) / p50(first(r.saverUs)))}×`)],
    [`whole invoke, p50, turns 1–${WINDOW}`, ...runs.map((r) => fmtDur(p50(first(r.invokeUs))))],
    [`whole invoke, p50, last ${WINDOW} turns`, ...runs.map((r) => fmtDur(p50(last(r.invokeUs))))],
    [
      "growth, last ÷ first",
      ...runs.map((r) => `${fmtNum(p50(last(r.invokeUs)) / p50(first(r.invokeUs)))}×`),
    ],
  ];
  const sizes = AT.flatMap((n) => {
    const r0 = raw.get(n)!;
    return [
      [
        `${fmtNum(n)} msgs: put + putWrites called directly, p50`,
        ...runs.map((r) => fmtDur(r.direct.get(n)!)),
      ],
      [`${fmtNum(n)} msgs: getTuple latest, p50`, ...runs.map((r) => fmtDur(r.at.get(n)!.getTuple))],
      [`${fmtNum(n)} msgs: list of 100, p50`, ...runs.map((r) => fmtDur(r.at.get(n)!.list))],
      [
        `${fmtNum(n)} msgs: on disk (× raw JSON ${mib(r0.plain)})`,
        ...runs.map((r) => `${mib(r.at.get(n)!.bytes)} (${fmtNum(r.at.get(n)!.bytes / r0.plain)}×)`),
      ],
    ];
  });
  const calls = runs.map(
    (r) => `${r.label}: ${fmtNum(r.calls.put / TURNS)} put, ${fmtNum(r.calls.putWrites / TURNS)} putWrites`,
  );
  return [
    `## LangGraph checkpointers: ${fmtNum(2 * TURNS)}-message thread, ${WORDS} words a message`,
    "",
    `- load average at the start / end: ${loadRecord.start} / ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`,
    `- calls a turn: ${calls.join("; ")}`,
    `- raw JSON at ${AT.map(fmtNum).join(" / ")} messages: ${AT.map((n) => mib(raw.get(n)!.plain)).join(" / ")} ({id, role, content}); LangGraph's serializer writes the list once in ${AT.map((n) => mib(raw.get(n)!.serialized)).join(" / ")}`,
    "",
    mdTable(head, steps),
    "",
    mdTable(head, sizes),
  ].join("\n");
}

const loadRecord = {
  start: loadavg()
    .map((l) => l.toFixed(2))
    .join(", "),
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-lgbench-"));
  const targets: LangGraphTarget[] = [];
  let drop: (() => Promise<void>) | undefined;
  try {
    if (ENGINES.has("sqlite")) targets.push(...(await sqliteTargets(dir)));
    if (ENGINES.has("postgres")) {
      try {
        const pg = await postgresTargets();
        targets.push(...pg.targets);
        drop = pg.drop;
      } catch (error) {
        progress(`Postgres skipped: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const next = rng(89);
    const users = Array.from({ length: TURNS }, () => makeText(next, WORDS));
    const replies = Array.from({ length: TURNS }, () => makeText(next, WORDS));
    const runs: Run[] = [];
    for (const target of targets) {
      const run: Run = {
        target,
        label: `${target.engine}: ${target.name}`,
        graph: compile(target, replies),
        saverUs: [],
        invokeUs: [],
        calls: { put: 0, putWrites: 0 },
        empty: 0,
        at: new Map(),
        direct: new Map(),
      };
      runs.push(run);
    }
    // The empty schema (created on first use) is not the thread's: sizes count from the schema a first read made.
    for (const run of runs) {
      await run.target.saver.getTuple(THREAD);
      run.empty = await run.target.size();
    }
    const spent = runs.map(() => ({ us: 0 }));
    for (const [k, run] of runs.entries()) timeWrites(run, spent[k]!);
    const raw = new Map<number, { plain: number; serialized: number }>();
    for (let t = 0; t < TURNS; t++) {
      for (let j = 0; j < runs.length; j++) {
        const k = (t + j) % runs.length;
        const run = runs[k]!;
        spent[k]!.us = 0;
        const t0 = nowUs();
        await run.graph.invoke({ messages: [new HumanMessage(users[t]!)] }, THREAD);
        run.invokeUs.push(nowUs() - t0);
        run.saverUs.push(spent[k]!.us);
      }
      const messages = 2 * (t + 1);
      if ((t + 1) % 50 === 0) progress(`turn ${t + 1} of ${TURNS}`);
      if (AT.includes(messages)) {
        await measureAt(runs, messages);
        raw.set(messages, await rawSizes(runs[0]!));
      }
    }
    const calls = runs.map((r) => ({ ...r.calls })); // the graph's calls, before the direct ones add theirs
    const final = await runs[0]!.target.saver.getTuple(THREAD);
    const all = (final?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
    for (const n of AT) {
      progress(`${fmtNum(n)} messages: put + putWrites called directly ×${DIRECT}`);
      await measureDirect(runs, all, n);
    }
    for (const [k, run] of runs.entries()) run.calls = calls[k]!;
    console.log(report(runs, raw));
  } finally {
    for (const target of targets) await target.close();
    if (drop) await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
