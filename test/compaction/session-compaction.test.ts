import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { SessionStore } from "../../src/contract/store.js";
import { MemoryStore, Session, SessionManager, type SessionMessage, SqliteStore } from "../../src/index.js";
import { createCompactFunction } from "../../src/utils/compaction-helpers.js";
import { assertSessionError } from "../helpers/session-error.js";
import { sqlTagAgent } from "../helpers/sql-tag.js";
import { warningsOf } from "../helpers/warnings.js";

const COMPACTION_WARNING = "AgentSessionCompactionWarning";

const dir = mkdtempSync(join(tmpdir(), "agent-session-compaction-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const text = (id: string, body: string, role = "user"): SessionMessage => ({
  id,
  role,
  parts: [{ type: "text", text: body }],
});
const ids = (messages: { id: string }[]) => messages.map((m) => m.id);

/** A deterministic summariser that records its prompts. */
function summariser(summary = "## Topic\nShort summary") {
  const prompts: string[] = [];
  const fn = createCompactFunction({
    summarize: async (prompt) => {
      prompts.push(prompt);
      return summary;
    },
    protectHead: 2,
    tailTokenBudget: 60,
    minTailMessages: 2,
  });
  return { fn, prompts };
}

async function fill(session: Session, n: number, prefix = "m", words = 20) {
  for (let i = 0; i < n; i++) {
    await session.appendMessage(
      text(`${prefix}${i}`, `${prefix}${i} ${"lorem ipsum ".repeat(words)}`, i % 2 ? "assistant" : "user"),
    );
  }
}

const backends: [string, () => SessionStore][] = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
  ["sql-tag", () => new SqliteStore(sqlTagAgent())],
];

for (const [name, create] of backends) {
  describe(`Session compaction (${name})`, () => {
    test("compact() without a function is a clear error", async () => {
      const session = Session.create(create());
      await assert.rejects(session.compact(), { code: "UNSUPPORTED" });
    });

    test("compact() stores an overlay and reports range, tokens and summary size; originals stay", async () => {
      const { fn, prompts } = summariser();
      const session = Session.create(create()).onCompaction(fn);
      await fill(session, 12);
      const before = await session.getHistory();
      const report = await session.compact();
      assert.ok(report);
      assert.equal(report.fromMessageId, "m2");
      assert.ok(report.coveredMessages >= 1);
      assert.ok(report.tokensAfter < report.tokensBefore);
      assert.equal(report.summaryChars, "## Topic\nShort summary".length);
      const history = await session.getHistory();
      assert.deepEqual(ids(history).slice(0, 3), ["m0", "m1", `compaction_${report.id}`]);
      assert.equal(history.length, before.length - report.coveredMessages + 1);
      assert.equal(await session.getPathLength(), 12);
      assert.ok(await session.getMessage("m3"));
      const [stored] = await session.getCompactions();
      assert.deepEqual(stored?.details, {
        coveredMessages: report.coveredMessages,
        tokensBefore: report.tokensBefore,
        tokensAfter: report.tokensAfter,
        summaryTokens: report.summaryTokens,
        summaryChars: report.summaryChars,
      });
      assert.match(prompts[0]!, /CONVERSATION TO SUMMARIZE/);
    });

    test("iterative compaction extends from the oldest visible overlay and updates the previous summary", async () => {
      const { fn, prompts } = summariser();
      const session = Session.create(create()).onCompaction(fn);
      await fill(session, 10);
      const first = await session.compact();
      await fill(session, 10, "n");
      const second = await session.compact();
      assert.equal(second?.fromMessageId, first?.fromMessageId);
      assert.match(prompts[1]!, /PREVIOUS SUMMARY/);
      const history = await session.getHistory();
      assert.equal(history.filter((m) => m.id.startsWith("compaction_")).length, 1);
      assert.equal(history[2]?.id, `compaction_${second?.id}`);
      assert.equal((await session.getCompactions()).length, 2);
    });

    test("blank and non-shrinking summaries are refused and never stored; a failing summariser rejects", async () => {
      // createCompactFunction answers a blank summary with null (the reference's behaviour)...
      const blankSummary = Session.create(create()).onCompaction(summariser("   ").fn);
      await fill(blankSummary, 10);
      assert.equal(await blankSummary.compact(), null);
      assert.deepEqual(await blankSummary.getCompactions(), []);
      // ...and a custom function that returns one anyway is refused, never stored.
      const blank = Session.create(create()).onCompaction(async (messages) => ({
        fromMessageId: messages[1]!.id,
        toMessageId: messages[3]!.id,
        summary: " \n ",
      }));
      await fill(blank, 10);
      await assert.rejects(blank.compact(), { code: "COMPACTION_REFUSED" });
      assert.deepEqual(await blank.getCompactions(), []);
      const bloated = Session.create(create()).onCompaction(summariser("very long summary ".repeat(500)).fn);
      await fill(bloated, 10);
      await assert.rejects(bloated.compact(), { code: "COMPACTION_REFUSED" });
      assert.deepEqual(await bloated.getCompactions(), []);
      const failing = Session.create(create()).onCompaction(
        createCompactFunction({
          summarize: async () => Promise.reject(new Error("model down")),
          tailTokenBudget: 10,
        }),
      );
      await fill(failing, 10);
      await assert.rejects(failing.compact(), /model down/);
      const offBranch = Session.create(create()).onCompaction(async () => ({
        fromMessageId: "m1",
        toMessageId: "ghost",
        summary: "s",
      }));
      await fill(offBranch, 4);
      await assert.rejects(offBranch.compact(), { code: "COMPACTION_REFUSED" });
      assert.equal(
        await Session.create(create())
          .onCompaction(async () => null)
          .compact(),
        null,
      );
    });

    test("a dry run shows what would be compacted without calling the model", async () => {
      const { fn, prompts } = summariser();
      const session = Session.create(create()).onCompaction(fn);
      await fill(session, 12);
      const plan = await session.compact(undefined, { dryRun: true });
      assert.equal(prompts.length, 0);
      assert.equal(plan?.dryRun, true);
      assert.deepEqual(await session.getCompactions(), []);
      const report = await session.compact();
      assert.equal(plan?.fromMessageId, report?.fromMessageId);
      assert.equal(plan?.toMessageId, report?.toMessageId);
      assert.equal(plan?.coveredMessages, report?.coveredMessages);
      const custom = Session.create(create()).onCompaction(async () => null);
      await assert.rejects(custom.planCompaction(), { code: "UNSUPPORTED" });
    });

    test("auto-compaction: above the threshold only, failures reach onCompactionError, the append succeeds", async () => {
      const { fn } = summariser();
      const session = Session.create(create()).onCompaction(fn).compactAfter(400);
      await fill(session, 4);
      assert.deepEqual(await session.getCompactions(), []);
      await fill(session, 10, "x");
      assert.ok((await session.getCompactions()).length >= 1);
      assert.ok((await session.estimateTokens()) <= 400 + 200);
      const errors: unknown[] = [];
      const failing = Session.create(create())
        .onCompaction(async () => {
          throw new Error("summariser exploded");
        })
        .compactAfter(10)
        .onCompactionError((error) => {
          errors.push(error);
        });
      assert.equal((await failing.appendMessage(text("a", "hello world ".repeat(20)))).inserted, true);
      assert.equal(errors.length, 1);
      assert.match(String(errors[0]), /summariser exploded/);
      const throwingHandler = Session.create(create())
        .onCompaction(async () => {
          throw new Error("again");
        })
        .compactAfter(10)
        .onCompactionError(() => {
          throw new Error("handler broke too");
        });
      const handlerWarnings = await warningsOf(COMPACTION_WARNING, async () => {
        const result = await throwingHandler.appendMessage(text("a", "hello world ".repeat(20)));
        assert.equal(result.inserted, true);
      });
      assert.deepEqual(
        handlerWarnings.map((w) => [w.message, (w.cause as Error).message]),
        [
          [
            'the onCompactionError handler threw while handling "again": handler broke too',
            "handler broke too",
          ],
        ],
      );
      assert.equal((await throwingHandler.getHistory()).length, 1);
      // Without a handler the failure is a process warning, never silent and never the append's.
      const unhandled = Session.create(create())
        .onCompaction(async () => {
          throw new Error("no handler here");
        })
        .compactAfter(10);
      const failureWarnings = await warningsOf(COMPACTION_WARNING, async () => {
        const result = await unhandled.appendMessage(text("a", "hello world ".repeat(20)));
        assert.equal(result.inserted, true);
      });
      assert.deepEqual(
        failureWarnings.map((w) => w.message),
        ["automatic compaction failed (the message was stored): no handler here"],
      );
      // A function that returns null above the threshold is reported once, not on every append.
      const nothing = Session.create(create())
        .onCompaction(async () => null)
        .compactAfter(10);
      const nullWarnings = await warningsOf(COMPACTION_WARNING, async () => {
        await nothing.appendMessage(text("a", "hello world ".repeat(20)));
        await nothing.appendMessage(text("b", "hello world ".repeat(20)));
      });
      assert.equal(nullWarnings.length, 1);
      assert.match(
        nullWarnings[0]?.message ?? "",
        /above compactAfter\(10\) but the compaction function returned null/,
      );
    });

    test("the estimate counts the frozen prompt; a custom counter gets messages, prompt and blocks", async () => {
      const store = create();
      const session = Session.create(store).withContext("soul", {
        provider: { get: async () => "persona ".repeat(100) },
      });
      await session.appendMessage(text("a", "hi"));
      const withPrompt = await session.estimateTokens();
      assert.ok(withPrompt > 100, `estimate ${withPrompt} includes the prompt`);
      const seen: unknown[] = [];
      let result = Number.NaN;
      const counted = Session.create(create())
        .withContext("soul", { provider: { get: async () => "persona" } })
        .onCompaction(async () => {
          throw new Error("must not run");
        })
        .compactAfter(1, {
          tokenCounter: (input) => {
            seen.push(input);
            return result;
          },
        });
      await counted.appendMessage(text("a", "hello"));
      const input = seen[0] as {
        messages: SessionMessage[];
        systemPrompt: string;
        contextBlocks: { label: string }[];
      };
      assert.deepEqual(ids(input.messages), ["a"]);
      assert.match(input.systemPrompt, /SOUL \[readonly\]/);
      assert.deepEqual(
        input.contextBlocks.map((b) => b.label),
        ["soul"],
      );
      result = Number.POSITIVE_INFINITY;
      await counted.appendMessage(text("b", "hello"));
      assert.equal(await counted.estimateTokens(), 0);
    });

    test("branches are compacted independently", async () => {
      const { fn } = summariser();
      const session = Session.create(create()).onCompaction(fn);
      await fill(session, 4);
      await fill(session, 8, "a");
      await session.appendMessage(text("b0", "other branch"), "m3");
      await fill(session, 8, "b");
      const onA = await session.compact("a7");
      assert.ok(onA);
      assert.ok(ids(await session.getHistory("a7")).includes(`compaction_${onA.id}`));
      assert.ok(!ids(await session.getHistory("b7")).some((id) => id.startsWith("compaction_")));
      const onB = await session.compact("b7");
      assert.notEqual(onB?.toMessageId, onA.toMessageId);
      assert.ok(ids(await session.getHistory("b7")).includes(`compaction_${onB?.id}`));
    });

    test("compact() refreshes the frozen prompt (as the reference does)", async () => {
      const { fn } = summariser();
      let soul = "v1";
      const session = Session.create(create())
        .withContext("soul", { provider: { get: async () => soul } })
        .onCompaction(fn);
      await fill(session, 10);
      assert.match(await session.freezeSystemPrompt(), /v1/);
      soul = "v2";
      await session.compact();
      assert.match(await session.freezeSystemPrompt(), /v2/);
    });
  });
}

describe("compaction persistence and row size", () => {
  test("overlays survive a restart on a SQLite file", async () => {
    const file = join(dir, "restart.db");
    const { fn } = summariser();
    const session = Session.create(file).onCompaction(fn);
    await fill(session, 12);
    const report = await session.compact();
    const visible = ids(await session.getHistory());
    await session.close();
    const again = Session.create(file);
    assert.deepEqual(ids(await again.getHistory()), visible);
    assert.ok(visible.includes(`compaction_${report?.id}`));
    await again.close();
  });

  test("nothing is truncated on write: withRowSizeLimit (deprecated) now refuses a larger message with TOO_LARGE", async () => {
    const session = Session.create(new MemoryStore()).withRowSizeLimit(10_000);
    const big = {
      id: "a",
      role: "assistant",
      parts: [
        {
          type: "tool-read",
          toolCallId: "c1",
          state: "output-available",
          input: {},
          output: { file: "x".repeat(50_000) },
        },
      ],
    };
    await assert.rejects(session.appendMessage(big), { code: "TOO_LARGE" });
    assert.equal(await session.getMessage("a"), null);
    await session.appendMessage(text("a", "small", "assistant"));
    await assert.rejects(session.updateMessage(text("a", "y".repeat(50_000), "assistant")), {
      code: "TOO_LARGE",
    });
    assert.equal((await session.getMessage("a"))?.parts[0]?.text, "small");
    // Without a cap the same message is stored whole.
    const open = Session.create(new MemoryStore());
    await open.appendMessage(big);
    assert.deepEqual(await open.getMessage("a"), big);
    assert.throws(() => Session.create(new MemoryStore()).withRowSizeLimit(10), { code: "INVALID_ARGUMENT" });
  });
});

describe("late configuration", () => {
  test("onCompaction, compactAfter and onCompactionError may be set on a session in use, as in the reference", async () => {
    const session = Session.create(new MemoryStore());
    await fill(session, 8);
    await assert.rejects(session.compact(), { code: "UNSUPPORTED" });
    const errors: unknown[] = [];
    const { fn } = summariser();
    session
      .onCompaction(fn)
      .compactAfter(60)
      .onCompactionError((error) => {
        errors.push(error);
      })
      .withRowSizeLimit(64 * 1024);
    await session.appendMessage(text("late", "one more message"));
    assert.deepEqual(errors, []);
    assert.equal((await session.getCompactions()).length, 1);
    assert.ok((await session.getHistory()).some((m) => m.id.startsWith("compaction_")));
  });

  test("settings that decide what is stored are refused once in use, naming what to do instead", async () => {
    const session = Session.create(new MemoryStore()).forSession("a");
    await session.ready();
    for (const [late, path] of [
      [() => session.forSession("b"), "forSession"],
      [() => session.withContext("late"), "withContext"],
      [() => session.withCachedPrompt(), "withCachedPrompt"],
    ] as const) {
      assertSessionError(late, { code: "INVALID_ARGUMENT", path, rule: "conflict" });
    }
    await session.addContext("late");
    assert.equal(session.getContextBlock("late")?.label, "late");
  });
});

describe("compaction settings that contradict each other", () => {
  const summarize = async () => "summary";
  const refused = { code: "INVALID_ARGUMENT", path: "compactAfter", rule: "conflict" } as const;

  test("a threshold below createCompactFunction's tail budget is refused in either order, on a Session and a manager", () => {
    const fn = createCompactFunction({ summarize });
    assert.deepEqual(fn.settings, { protectHead: 3, tailTokenBudget: 20_000, minTailMessages: 2 });
    assertSessionError(() => Session.create(new MemoryStore()).onCompaction(fn).compactAfter(1500), refused);
    assertSessionError(() => Session.create(new MemoryStore()).compactAfter(1500).onCompaction(fn), refused);
    assertSessionError(
      () => SessionManager.create(new MemoryStore()).onCompaction(fn).compactAfter(1500),
      refused,
    );
    assertSessionError(
      () => SessionManager.create(new MemoryStore()).compactAfter(1500).onCompaction(fn),
      refused,
    );
  });

  test("a threshold at or above the tail budget, or a function of the app's own, is accepted", () => {
    const small = createCompactFunction({ summarize, tailTokenBudget: 1000 });
    Session.create(new MemoryStore()).onCompaction(small).compactAfter(1000);
    Session.create(new MemoryStore()).compactAfter(20_000).onCompaction(createCompactFunction({ summarize }));
    Session.create(new MemoryStore())
      .compactAfter(10)
      .onCompaction(async () => null);
    SessionManager.create(new MemoryStore()).compactAfter(5000).onCompaction(small);
  });
});
