// A transferred block's or entry's record (`sessionId` or `owner`, at most one) is checked by the transfer schema:
// a malformed one is refused with INVALID_ARGUMENT at its field, by the schema and by every store's import, before
// any row is written; a well-formed one is stored as the row's record.
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasRecords } from "../src/contract/context.js";
import type { TransferRow } from "../src/contract/transfer.js";
import type { SessionIssueRule } from "../src/errors.js";
import { MemoryStore } from "../src/memory/store.js";
import { SqliteStore } from "../src/sqlite/store.js";
import { assertTransferRow } from "../src/store/transfer/schema.js";
import { assertSessionError, rejectsWithIssue } from "./helpers/session-error.js";

const block = { kind: "block", key: "profile_bob", content: "likes tea" } as const;
const entry = { kind: "entry", label: "facts", key: "bob-tea", content: "drinks tea" } as const;

// Each bad record with where its refusal points.
const bad: [string, Record<string, unknown>, string, SessionIssueRule][] = [
  ["both", { sessionId: "s1", owner: "bob" }, "owner", "conflict"],
  ["a numeric owner", { owner: 7 }, "owner", "format"],
  ["a numeric session", { sessionId: 7 }, "sessionId", "format"],
  ["an empty session", { sessionId: "" }, "sessionId", "format"],
  ["a null owner", { owner: null }, "owner", "format"],
  ["an owner with a control character", { owner: "bo\nb" }, "owner", "format"],
];

test("the schema refuses a malformed record at its field, for a block and an entry", () => {
  for (const base of [block, entry]) {
    for (const [, record, path, rule] of bad) {
      assertSessionError(() => assertTransferRow({ ...base, ...record } as TransferRow), {
        code: "INVALID_ARGUMENT",
        path,
        rule,
      });
    }
    assertTransferRow({ ...base, sessionId: "s1" });
    assertTransferRow({ ...base, owner: "bob" });
    assertTransferRow(base);
  }
  assert.throws(() => assertTransferRow({ ...block, sessionId: "s1", owner: "bob" }), {
    message: 'The record of block "profile_bob" names both a session and an owner (it is one or the other)',
  });
  assert.throws(() => assertTransferRow({ ...entry, owner: 7 as never }), {
    message:
      /^The owner of entry "bob-tea" in "facts" must be a non-empty, well-formed string .*, got number 7$/,
  });
});

async function* rows(...items: TransferRow[]): AsyncGenerator<TransferRow> {
  yield* items;
}

for (const [name, open] of [
  ["memory", () => new MemoryStore()],
  ["SQLite", () => new SqliteStore(":memory:")],
] as const) {
  test(`${name}: an import refuses a malformed record before writing it, and stores a good one`, async () => {
    const store = open();
    try {
      for (const [, record, path] of bad) {
        await rejectsWithIssue(store.transfer.importRows(rows({ ...block, ...record } as TransferRow)), {
          code: "INVALID_ARGUMENT",
          path,
        });
      }
      assert.equal(await store.blocks.getBlock("profile_bob"), null);
      const counts = await store.transfer.importRows(
        rows(
          { ...block, owner: "bob" },
          { ...entry, owner: "bob" },
          { kind: "block", key: "notes", content: "", sessionId: "s1" },
        ),
      );
      assert.deepEqual(counts, { inserted: 3, skipped: 0 });
      assert.ok(hasRecords(store.blocks));
      assert.deepEqual(await store.blocks.recordedKeys({ owner: "bob" }), ["profile_bob"]);
      assert.deepEqual(await store.blocks.recordedKeys({ sessionId: "s1" }), ["notes"]);
      assert.deepEqual(await store.blocks.deleteRecorded({ owner: "bob" }), { blocks: 1, entries: 1 });
    } finally {
      await store.close();
    }
  });
}
