import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sessionBlocks } from "../../src/cli/inspect/blocks.js";
import { API_ROUTES } from "../../src/cli/serve/api.js";
import { REMINDER_OPENING } from "../../src/context/reminder.js";
import { MemoryStore, Session, type SessionStore, SqliteStore } from "../../src/index.js";

const stores: Array<[string, () => SessionStore]> = [
  ["memory", () => new MemoryStore()],
  ["sqlite", () => new SqliteStore(":memory:")],
];

for (const [name, create] of stores) {
  describe(`viewer blocks: pending reminders (${name})`, () => {
    test("a stored block the frozen prompt no longer holds shows the section its reminder carries", async () => {
      const store = create();
      const session = Session.create(store)
        .forSession("s_1")
        .withContext("memory", { description: "Facts (learned)", maxTokens: 100, whenChanged: "remind" })
        .withContext("mem", { whenChanged: "remind" })
        .withContext("notes")
        .withCachedPrompt();
      await session.appendMessage({ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] });
      // Only written blocks have rows, so each is written once before the freeze.
      await session.replaceContextBlock("memory", "Likes coffee.");
      await session.replaceContextBlock("mem", "");
      await session.replaceContextBlock("notes", "first");
      await session.freezeSystemPrompt();
      const reminders = async () =>
        Object.fromEntries((await sessionBlocks(store, "s_1")).blocks.map((b) => [b.label, b.reminder]));
      assert.deepEqual(await reminders(), { memory: null, mem: null, notes: null });

      await session.replaceContextBlock("memory", "Likes tea.");
      await session.replaceContextBlock("notes", "changed too");
      const pending = await reminders();
      const expected = (await session.reminder())?.slice(REMINDER_OPENING.length + 2);
      assert.equal(pending.memory, expected, "exactly the section Session.reminder() sends");
      assert.match(
        pending.memory ?? "",
        /^═+\nMEMORY \(Facts \(learned\)\) \[\d+% — \d+\/100 tokens\] \[writable\]/,
      );
      assert.equal(pending.mem, null, "a label sharing the prefix is not confused with it");
      assert.match(
        pending.notes ?? "",
        /NOTES \[writable\]\n═+\nchanged too$/,
        "a wait block is flagged too",
      );

      const api = (await API_ROUTES.blocks!(store, new URLSearchParams({ id: "s_1" }))) as {
        blocks: Array<{ label: string; reminder: string | null }>;
      };
      assert.equal(api.blocks.find((b) => b.label === "memory")?.reminder, expected, "the API carries it");

      await session.refreshSystemPrompt();
      assert.deepEqual(await reminders(), { memory: null, mem: null, notes: null });
      await session.close();
    });
  });
}
