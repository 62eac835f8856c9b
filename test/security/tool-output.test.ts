// Red-team probes of issue #13 (tool output is unbounded), kept as tests: ten 1.6 MB messages made
// session_search return 16 MB and search_context 15 MB. Every memory tool's result now stays within its limits.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_TOOL_OUTPUT_LIMITS } from "../../src/context/output.js";
import type { SessionStore } from "../../src/contract/store.js";
import { AgentSearchProvider, MemoryStore, Session, SessionManager, SqliteStore } from "../../src/index.js";
import { msg, rejectsWithCode } from "../../src/testing/contract/harness.js";

const { maxOutputChars } = DEFAULT_TOOL_OUTPUT_LIMITS;
const HUGE = 1_600_000;

/** Asserts a pattern without printing megabytes when it fails. */
function has(out: string, pattern: RegExp): void {
  assert.ok(pattern.test(out), `${pattern} not in …${out.slice(-300)}`);
}

/** Asserts a result is within `max` characters, markers included. */
function within(out: string, max: number): void {
  assert.ok(out.length <= max, `${out.length} > ${max} characters`);
}

/** A text of `size` characters whose only "needle" sits near the end. */
function haystack(size: number, tag: string): string {
  const filler = `${tag} filler words `.repeat(Math.ceil(size / (tag.length + 14)));
  return `${filler.slice(0, size - 200)} the needle is here ${"z".repeat(180)}`;
}

const backends: [string, () => SessionStore][] = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];

for (const [name, create] of backends) {
  describe(`tool output bounds: ${name}`, () => {
    test("session_search over ten 1.6 MB messages: bounded, the window shows the match, a marker says how", async () => {
      const manager = SessionManager.create(create());
      const info = await manager.create("big");
      for (let i = 0; i < 10; i++) await manager.append(info.id, msg(`m${i}`, haystack(HUGE, `h${i}`)));
      const out = await manager.tools().session_search!.execute({ query: "needle" });
      within(out, maxOutputChars);
      has(out, /the needle is here/);
      has(out, /\[hit truncated: characters [\d,]+–1,600,000 of 1,600,000 shown; search with words/);
      assert.match(
        out,
        /\[output truncated: \d of 10 results shown \(limit 32,000 characters\); search with more/,
      );
      const small = await manager.tools({ maxHitChars: 500, maxOutputChars: 2000 }).session_search!.execute({
        query: "needle",
      });
      within(small, 2000);
      await manager.close();
    });

    test("search_context over huge entries and over a provider returning 15 MB: bounded", async () => {
      const store = create();
      const huge = { get: async () => "huge", search: async () => "y".repeat(15_000_000) };
      const session = Session.create(store)
        .withContext("kb", { provider: new AgentSearchProvider(store) })
        .withContext("raw", { provider: huge });
      // Fewer, smaller entries than the probe as filed: the bound, not the volume, is under test here.
      for (let i = 0; i < 10; i++) await session.setSearchEntry("kb", `doc${i}`, haystack(100_000, `d${i}`));
      const tools = await session.tools();
      const kb = await tools.search_context!.execute({ label: "kb", query: "needle" });
      within(kb, maxOutputChars);
      has(kb, /^\[doc\d\]\n…/);
      has(kb, /the needle is here/);
      const raw = await tools.search_context!.execute({ label: "raw", query: "anything" });
      within(raw, maxOutputChars);
      has(raw, /\[output truncated: 31,800 of 15,000,000 characters shown\]$/);
      await session.close();
    });
  });
}

describe("tool output bounds: load_context and errors", () => {
  test("a huge skill loads in parts; the marker names the offset of the next part", async () => {
    const doc = haystack(100_000, "skill");
    const skills = { get: async () => "- big", load: async (key: string) => (key === "big" ? doc : null) };
    const session = Session.create(new MemoryStore()).withContext("skills", { provider: skills });
    const load = (await session.tools()).load_context!;
    const parts: string[] = [];
    let offset = 0;
    for (;;) {
      const out = await load.execute({ label: "skills", key: "big", offset });
      within(out, maxOutputChars);
      const next = /load it again with offset: (\d+) for the next part\]$/.exec(out);
      parts.push(out.slice(0, out.lastIndexOf("\n[")).replace(/…$/, ""));
      if (!next) {
        has(out, /\[end of document: characters [\d,]+–100,000 shown\]$/);
        break;
      }
      offset = Number(next[1]);
    }
    assert.equal(parts.join(""), doc);
    assert.equal(parts.length, 4);
    assert.match(await load.execute({ label: "skills", key: "big", offset: 200_000 }), /^\[end of document/);
    assert.match(
      await load.execute({ label: "skills", key: "big", offset: -1 }),
      /^Error: invalid input: "offset"/,
    );
    assert.deepEqual([...(await session.getLoadedSkillKeys())], ["skills:big"]);
  });

  test("an error echoing a huge input is bounded too", async () => {
    const session = Session.create(new MemoryStore()).withContext("memory");
    const out = await session.executeTool("set_context", { label: "x".repeat(1_000_000), content: "a" });
    has(out, /^Error: block "x+/);
    within(out, maxOutputChars);
  });

  test("limits are configurable on Session and SessionManager, validated, and reach the history block", async () => {
    const store = new MemoryStore();
    const manager = SessionManager.create(store)
      .withSearchableHistory("history")
      .withToolOutputLimits({ maxHitChars: 500, maxOutputChars: 1500 });
    const info = await manager.create("a");
    for (let i = 0; i < 5; i++) await manager.append(info.id, msg(`m${i}`, haystack(5000, `t${i}`)));
    const viaManager = await manager.tools().session_search!.execute({ query: "needle" });
    within(viaManager, 1500);
    has(viaManager, /of 5 results shown \(limit 1,500 characters\)/);
    const history = manager.getSession(info.id);
    const viaBlock = await history.executeTool("search_context", { label: "history", query: "needle" });
    within(viaBlock, 1500);
    has(viaBlock, /hit truncated/);
    assert.throws(() => Session.create(store).withToolOutputLimits({ maxHitChars: 499 }), {
      code: "INVALID_ARGUMENT",
    });
    assert.throws(() => SessionManager.create(store).withToolOutputLimits({ maxOutputChars: 1.5 }), {
      code: "INVALID_ARGUMENT",
    });
    await assert.rejects(Session.create(store).tools({ maxOutputChars: -1 }), { code: "INVALID_ARGUMENT" });
    await manager.close();
  });

  test("SessionManager.withToolOutputLimits may be set at any time and reaches sessions already handed out", async () => {
    // It changes what tools return, not what is stored, so (like compaction settings) it is not a first-use template.
    const manager = SessionManager.create(new MemoryStore()).withSearchableHistory("history");
    const info = await manager.create("a");
    for (let i = 0; i < 5; i++) await manager.append(info.id, msg(`m${i}`, haystack(5000, `t${i}`)));
    const session = manager.getSession(info.id);
    await session.ready();
    manager.withToolOutputLimits({ maxHitChars: 500, maxOutputChars: 1500 });
    within(await manager.tools().session_search!.execute({ query: "needle" }), 1500);
    const viaBlock = await session.executeTool("search_context", { label: "history", query: "needle" });
    within(viaBlock, 1500);
    has(viaBlock, /hit truncated/);
    // A session handed out later gets the limits too; a bad value is refused and changes nothing.
    const later = await manager.create("b");
    const fresh = manager.getSession(later.id);
    within(await fresh.executeTool("search_context", { label: "history", query: "needle" }), 1500);
    assert.throws(() => manager.withToolOutputLimits({ maxOutputChars: 1.5 }), { code: "INVALID_ARGUMENT" });
    within(await session.executeTool("search_context", { label: "history", query: "needle" }), 1500);
    await manager.close();
  });

  test("a query over the limits reaches the model as an Error string, a caller as a SessionError", async () => {
    const store = new MemoryStore();
    const manager = SessionManager.create(store).withSearchableHistory("history");
    const info = await manager.create("a");
    await manager.append(info.id, msg("m1", "deployment notes"));
    const probe = "deployments ".repeat(4000);
    assert.match(
      await manager.tools().session_search!.execute({ query: probe }),
      /^Error: Search query too long: 48000 characters, the limit is 4096\. Search for a few distinctive words/,
    );
    const session = manager.getSession(info.id);
    assert.match(
      await session.executeTool("search_context", { label: "history", query: probe }),
      /^Error: Search/,
    );
    await rejectsWithCode(session.search(probe), "INVALID_ARGUMENT");
    await rejectsWithCode(manager.search(probe), "INVALID_ARGUMENT");
    await manager.close();
  });
});
