// The profile block's rendering and wiring beyond the contract (src/testing/contract/facts-profile.spec.ts): the
// budget estimate is exact, line breaks JSON keeps are escaped, bad budgets and bare providers are refused, an
// encrypted owner's refused facts render a marker, and an unread remainder is said to be one.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { Fact } from "../../src/contract/facts.js";
import { SessionError } from "../../src/errors.js";
import { FactsProfileProvider, factsProfile } from "../../src/facts/profile.js";
import {
  factLine,
  leftOutLine,
  PROFILE_SEALED,
  quoteFact,
  renderProfile,
} from "../../src/facts/profile-render.js";
import { MemoryStore, Session, SqliteStore } from "../../src/index.js";
import { estimateStringTokens } from "../../src/message/tokens.js";
import { fact, ownedSession } from "../../src/testing/contract/facts-harness.js";
import { msg, rejectsWithCode } from "../../src/testing/contract/harness.js";
import { randomKeyring } from "../helpers/encryption.js";

function stored(text: string, i: number): Fact {
  return {
    id: `f${i}`,
    text,
    about: i % 3 === 0 ? `person ${i}` : null,
    observedAt: 1_700_000_000_000 - i * 86_400_000,
    producer: "function:test",
    sources: [{ sessionId: "s", messageId: "m" }],
    owner: null,
    sessionId: "s",
    status: "current",
    supersededBy: null,
    createdAt: 1_700_000_000_000,
  };
}

test("the budget is the library's estimate of the whole block, and the left-out line counts what was cut", () => {
  const words = [
    "tea",
    "a fairly long sentence about the user's many plans",
    "x".repeat(300),
    "日本語のテキスト",
  ];
  const facts = Array.from({ length: 60 }, (_, i) => stored(`${words[i % words.length]} ${i}`, i));
  for (let maxTokens = 128; maxTokens <= 2_000; maxTokens += 37) {
    const content = renderProfile({ facts, unread: false, sealed: false }, maxTokens);
    const tokens = estimateStringTokens(content);
    assert.ok(tokens <= maxTokens, `${tokens} <= ${maxTokens}`);
    const shown = content.split("\n").filter((line) => line.startsWith("- ")).length;
    const last = content.split("\n").at(-1)!;
    if (shown < facts.length)
      assert.match(last, new RegExp(`^\\(${facts.length - shown} more facts? left out`));
    // The next fact would not have fitted: nothing is cut that the budget had room for.
    if (shown < facts.length) {
      const withNext = [...content.split("\n").slice(0, -1), factLine(facts[shown]!)];
      const rest = facts.length - shown - 1;
      if (rest > 0) withNext.push(leftOutLine(rest, false, maxTokens));
      assert.ok(
        estimateStringTokens(withNext.join("\n")) > maxTokens,
        `fact ${shown} did not fit ${maxTokens}`,
      );
    }
  }
  assert.equal(renderProfile({ facts: [], unread: false, sealed: false }, 500), "");
  const all = renderProfile({ facts: facts.slice(0, 2), unread: false, sealed: false }, 1_000);
  assert.doesNotMatch(all, /left out/, "no marker when nothing is left out");
  const unread = renderProfile({ facts: facts.slice(0, 2), unread: true, sealed: false }, 1_000);
  assert.match(
    unread,
    /\(0 more facts left out to keep this block within 1000 tokens, and older facts were not read\.\)$/,
  );
});

test("a fact's quote escapes every line break, JSON's and those JSON keeps", () => {
  const text = 'a\nb\rc\u2028d\u2029e\u0085f\u000bg\u000ch"i\\j';
  const quoted = quoteFact(text);
  for (const c of "\n\r\u2028\u2029\u0085\u000b\u000c")
    assert.ok(!quoted.includes(c), `U+${c.charCodeAt(0)}`);
  assert.equal(JSON.parse(quoted), text);
});

test("a budget out of range, a profile on a bare provider and a profile read outside a Session are refused", async () => {
  for (const maxTokens of [0, 127, 1.5, 32_001, Number.NaN]) {
    assert.throws(
      () => factsProfile({ maxTokens }),
      (e: unknown) => e instanceof SessionError && e.code === "INVALID_ARGUMENT",
    );
  }
  assert.throws(() => factsProfile(null as never), { code: "INVALID_ARGUMENT" });
  const store = new MemoryStore();
  const tooSmall = Session.create(store)
    .forSession("s")
    .withContext("profile", { ...factsProfile(), maxTokens: 50 });
  await rejectsWithCode(tooSmall.freezeSystemPrompt(), "INVALID_ARGUMENT");
  const bare = new Session(store.session("s")).withContext("profile", factsProfile());
  await rejectsWithCode(bare.freezeSystemPrompt(), "UNSUPPORTED");
  await rejectsWithCode(factsProfile().provider!.get(), "UNSUPPORTED");
  // The block's own maxTokens is the budget: the header shows it.
  await store.session("s").appendMessage(msg("m1", "I like tea"));
  await store.facts.add({ sessionId: "s" }, [fact("The user likes tea.", [["s", "m1"]])]);
  const own = Session.create(store)
    .forSession("s")
    .withContext("profile", { ...factsProfile(), maxTokens: 300 });
  assert.match(await own.freezeSystemPrompt(), /\[\d+% — \d+\/300 tokens\] \[readonly\]/);
});

test("an encrypted owner's facts refused by the store render a marker; other failures name the block", async () => {
  const store = new MemoryStore();
  await ownedSession(store, "s", "alice", ["I like tea"]);
  await store.facts.add({ sessionId: "s" }, [fact("The user likes tea.", [["s", "s-0"]])]);
  const list = store.facts.list.bind(store.facts);
  let failure: SessionError | Error = new SessionError("DECRYPT_FAILED", "no key for alice");
  store.facts.list = async (scope, query) => {
    if ("owner" in scope) throw failure;
    return list(scope, query);
  };
  const session = Session.create(store).forSession("s").withContext("profile", factsProfile());
  await session.ready();
  const lines = session.getContextBlock("profile")!.content.split("\n");
  assert.deepEqual(lines.slice(1), [PROFILE_SEALED, '- 2023-11-14 "The user likes tea."']);
  failure = new Error("disk on fire");
  const broken = Session.create(store).forSession("s").withContext("profile", factsProfile());
  const error = await broken.ready().then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(error instanceof SessionError && error.code === "STORAGE" && /"profile"/.test(error.message));
});

test("a scope past the 1,000 facts read says the left-out count is a lower bound", async () => {
  const store = new MemoryStore();
  await store.session("s").appendMessage(msg("m1", "many"));
  for (let batch = 0; batch < 11; batch++) {
    await store.facts.add(
      { sessionId: "s" },
      Array.from({ length: 100 }, (_, i) => fact(`Fact ${batch * 100 + i}.`, [["s", "m1"]])),
    );
  }
  const session = Session.create(store)
    .forSession("s")
    .withContext("profile", factsProfile({ maxTokens: 200 }));
  await session.ready();
  const content = session.getContextBlock("profile")!.content;
  const shown = content.split("\n").filter((line) => line.startsWith("- ")).length;
  assert.match(
    content,
    new RegExp(`\\(${1_000 - shown} more facts left out .*, and older facts were not read\\.\\)$`),
  );
});

test("SQLite: an encrypted owner's profile shows her sealed facts with her key, and says they are sealed without it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "profile-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "store.db");
  const store = new SqliteStore(path, { keyring: randomKeyring(["alice"]) });
  t.after(() => store.close());
  await ownedSession(store, "s", "alice", ["I like tea"]);
  await store.facts.add({ owner: "alice" }, [fact("Alice likes tea.", [["s", "s-0"]])]);
  const prompt = (s: SqliteStore) =>
    Session.create(s)
      .forSession("s")
      .withContext("profile", factsProfile())
      .withCachedPrompt()
      .freezeSystemPrompt();
  assert.match(await prompt(store), /Alice likes tea\./);
  // Without her key (her session's frozen prompt is sealed too: the provider is asked alone).
  const keyless = new SqliteStore(path);
  t.after(() => keyless.close());
  const shown = (await new FactsProfileProvider(keyless, "s", 1000).get()) ?? "";
  assert.doesNotMatch(shown, /tea/);
  assert.ok(shown.includes(PROFILE_SEALED), shown);
});
