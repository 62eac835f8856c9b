// The export format against the owner-data declarations (src/store/transfer/owner-fields.ts, and each storage room's
// own, src/sql/room.ts `transferFields`): every declared content
// and name column is carried by a field of the CLI's export or left out with a reason, every entry names a declared
// column, and every carried field is present in a real export of a store holding one of each kind of row (a fact, a
// checkpoint and a LangGraph store item too).
import assert from "node:assert/strict";
import { test } from "node:test";
import { writeExport } from "../../src/cli/transfer/export.js";
import { SessionManager } from "../../src/manager/manager.js";
import { POSTGRES_OWNER_DATA } from "../../src/sql/owner-data/postgres.js";
import { SQLITE_OWNER_DATA } from "../../src/sql/owner-data/sqlite.js";
import { ROOMS } from "../../src/sql/rooms/list.js";
import { SqliteStore } from "../../src/sqlite/store.js";
import { TRANSFER_FIELDS as CORE_FIELDS } from "../../src/store/transfer/owner-fields.js";

const TRANSFER_FIELDS = Object.fromEntries([
  ...Object.entries(CORE_FIELDS),
  ...ROOMS.flatMap((room) => Object.entries(room.transferFields)),
]);

const declared = new Set<string>();
for (const declaration of [SQLITE_OWNER_DATA, POSTGRES_OWNER_DATA])
  for (const table of declaration)
    for (const [column, holds] of Object.entries(table.columns))
      if (holds === "content" || holds === "name") declared.add(`${table.table}.${column}`);

test("every declared content and name column is carried by the export or left out with a reason", () => {
  const unmapped = [...declared].filter((column) => !(column in TRANSFER_FIELDS));
  assert.deepEqual(unmapped, [], "declared columns the export neither carries nor leaves out");
  const stale = Object.keys(TRANSFER_FIELDS).filter((column) => !declared.has(column));
  assert.deepEqual(stale, [], "transfer fields of columns no declaration has");
  for (const [column, field] of Object.entries(TRANSFER_FIELDS))
    if ("left" in field) assert.ok(field.left.length > 20, `${column}: say why it is left out`);
});

test("every carried field is in a real export", async () => {
  const store = new SqliteStore(":memory:");
  try {
    const manager = SessionManager.create(store);
    const { id } = await manager.create("a name", { owner: "alice" });
    await manager.append(id, { id: "m0", role: "user", parts: [{ type: "text", text: "words" }] });
    const url = `data:image/png;base64,${Buffer.alloc(600, 7).toString("base64")}`;
    const image = { id: "m1", role: "user", parts: [{ type: "file", mediaType: "image/png", url }] };
    await manager.append(id, image as never);
    await manager.addCompaction(id, "a summary", "m0", "m0", { summaryChars: 9 } as never);
    await store.blocks.setBlock("prefs", "tea", { owner: "alice" });
    await store.entries.setEntry("facts", "k", "otters", { owner: "alice" });
    await store.facts.add({ owner: "alice" }, [
      {
        text: "Alice's words.",
        about: "Alice",
        observedAt: 1,
        sources: [{ sessionId: id, messageId: "m0" }],
        producer: "function:test",
      },
    ]);
    // A LangGraph thread's checkpoint, with a value and a pending write (sql/checkpoints/).
    const bytes = (text: string) => new TextEncoder().encode(text);
    await store.checkpoints.put(
      {
        sessionId: id,
        ns: "",
        id: "c1",
        parentId: null,
        type: "json",
        data: bytes("{}"),
        metadataType: "json",
        metadata: bytes("{}"),
        versions: { messages: "1" },
      },
      [{ channel: "messages", version: "1", type: "json", data: bytes("[]") }],
    );
    await store.checkpoints.putWrites(
      id,
      "",
      "c1",
      [{ taskId: "t", idx: 0, channel: "messages", type: "json", data: bytes("1"), taskPath: "" }],
      false,
    );
    // A LangGraph store item of alice's (sql/graph-store/): a whole-store export carries it.
    const item = { owner: "alice", namespace: "alice.memories", key: "k", value: '{"a":1}', fields: null };
    await store.graphItems.write([{ ...item, ttlMs: null }], [], Date.now());
    let text = "";
    const none = { increment() {}, setTotal() {}, stop() {} };
    const write = async (chunk: string) => {
      text += chunk;
    };
    await writeExport(store, write, {
      sessionIds: [],
      progress: none,
      countFirst: false,
    });
    const lines = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const missing: string[] = [];
    for (const field of Object.values(TRANSFER_FIELDS)) {
      if (!("carried" in field)) continue;
      const [type, ...path] = field.carried.split(".");
      const found = lines.some((line) => {
        if (line.type !== type) return false;
        let value: unknown = line;
        for (const key of path) value = (value as Record<string, unknown> | null)?.[key];
        return value !== undefined && value !== null;
      });
      if (!found) missing.push(field.carried);
    }
    assert.deepEqual(missing, [], "carried fields no line of the export holds");
  } finally {
    await store.close();
  }
});
