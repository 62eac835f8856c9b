import assert from "node:assert/strict";
import { REMINDER_OPENING, REMINDER_PREAMBLE } from "../../context/reminder.js";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import { Session } from "../../session/session.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg } from "./harness.js";

/** A read-only block whose value the test moves on, like today's date. */
function dateBlock(initial: string) {
  const state = { date: initial };
  return { state, provider: { get: async () => `Today is ${state.date}.` } };
}

function openSession(store: SessionStore, date: { get(): Promise<string> }): Session {
  return Session.create(store)
    .forSession("remind")
    .withContext("soul", { provider: { get: async () => "You are helpful." } })
    .withContext("environment", { provider: date, whenChanged: "remind" })
    .withContext("memory", { description: "Learned facts", whenChanged: "remind" })
    .withCachedPrompt();
}

/** The frozen prompt exactly as the backend holds it. */
async function storedPrompt(store: SessionStore): Promise<Buffer> {
  assert.ok(hasContextStorage(store));
  const raw = await store.blocks.getBlock("_system_prompt_remind");
  assert.notEqual(raw, null, "the prompt is stored");
  return Buffer.from(raw!, "utf8");
}

/** Reminders for `whenChanged: "remind"` blocks, compared against the prompt the backend stores. */
export function remindersSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("context reminders", () => {
    test("a changed date is reminded for ten turns while the stored prompt stays byte-identical; refresh ends it", async () => {
      let store = await target.create();
      try {
        const date = dateBlock("2026-09-28");
        let session = openSession(store, date.provider);
        assert.equal(await session.reminder(), null, "nothing frozen yet");
        const frozen = await session.freezeSystemPrompt();
        assert.match(frozen, /ENVIRONMENT \[readonly\]\n═+\nToday is 2026-09-28\./);
        const bytes = await storedPrompt(store);
        assert.equal(await session.reminder(), null, "nothing changed yet");

        date.state.date = "2026-09-29";
        let first: string | null = null;
        for (let turn = 0; turn < 10; turn++) {
          await session.appendMessage(msg(`u${turn}`, `question ${turn}`));
          const reminder = await session.reminder();
          assert.ok(reminder !== null, `turn ${turn} has a reminder`);
          assert.ok(reminder.startsWith(REMINDER_OPENING));
          assert.match(reminder, /ENVIRONMENT \[readonly\]\n═+\nToday is 2026-09-29\.$/);
          assert.doesNotMatch(reminder, /SOUL|MEMORY|2026-09-28/);
          first ??= reminder;
          assert.equal(reminder, first, "the same reminder every call");
          assert.equal(await session.freezeSystemPrompt(), frozen);
          assert.ok((await storedPrompt(store)).equals(bytes), `turn ${turn}: stored prompt unchanged`);
          await session.appendMessage(msg(`a${turn}`, `answer ${turn}`, "assistant"));
        }
        const history = JSON.stringify(await session.getHistory());
        assert.equal((await session.getHistory()).length, 20);
        assert.ok(!history.includes("2026-09-29") && !history.includes(REMINDER_PREAMBLE), "never stored");

        // A restart compares against the stored prompt: the reminder is still due.
        if (target.reopen) store = await target.reopen(store);
        session = openSession(store, date.provider);
        assert.equal(await session.reminder(), first);
        assert.equal(await session.freezeSystemPrompt(), frozen);

        const refreshed = await session.refreshSystemPrompt();
        assert.match(refreshed, /Today is 2026-09-29\./);
        assert.equal(await session.reminder(), null, "refresh promotes the value");
        assert.equal((await storedPrompt(store)).toString("utf8"), refreshed);
      } finally {
        if (target.destroy) await target.destroy(store);
        else await store.close();
      }
    });

    test("the model's own set_context on a writable remind block is reminded until a refresh", async () => {
      const store = await target.create();
      try {
        const session = openSession(store, dateBlock("2026-09-28").provider);
        const frozen = await session.freezeSystemPrompt();
        // An empty remind block still has its section, so a later value has a copy to replace.
        assert.match(frozen, /MEMORY \(Learned facts\) \[writable\]\n═+\n$/);
        const result = await session.executeTool("set_context", { label: "memory", content: "Likes tea." });
        assert.match(result, /^Written to memory/);
        const reminder = await session.reminder();
        assert.match(reminder ?? "", /MEMORY \(Learned facts\) \[writable\]\n═+\nLikes tea\.$/);
        assert.doesNotMatch(reminder ?? "", /ENVIRONMENT/);
        assert.equal(await session.freezeSystemPrompt(), frozen);
        assert.match(await session.refreshSystemPrompt(), /Likes tea\./);
        assert.equal(await session.reminder(), null);
      } finally {
        if (target.destroy) await target.destroy(store);
        else await store.close();
      }
    });
  });
}
