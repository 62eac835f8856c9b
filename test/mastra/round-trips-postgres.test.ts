// The statements the Mastra door sends to one Postgres server (docs/MASTRA.md, "Costs"; docs/PERFORMANCE.md, "Mastra
// memory storages"): on a short thread a save's and a list's time is their round trips, so their count is held here
// and cannot creep up unseen. Exact counts, not a timing: lower them when a change removes a statement.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { MastraDBMessage } from "@mastra/core/memory";
import { AgentSessionMemoryStorage } from "../../src/mastra/index.js";
import { PostgresStore } from "../../src/postgres/index.js";
import { inOwnSchema, postgresUnavailable } from "../fixtures/postgres-db.js";
import { counted } from "../helpers/round-trips.js";
import { nodeTooOld } from "./backends.js";

let n = 0;
const message = (text: string) =>
  ({
    id: `m${++n}`,
    threadId: "t1",
    resourceId: "alice",
    role: n % 2 ? "user" : "assistant",
    createdAt: new Date(Date.UTC(2025, 0, 1) + n * 1000),
    content: { format: 2, parts: [{ type: "text", text }] },
  }) as MastraDBMessage;

const reason = nodeTooOld() ?? (await postgresUnavailable());
if (reason) console.log(`Skipping the Mastra door's round trips on Postgres: ${reason}`);
test("Postgres: a warm thread's save and last-40 list send the statements they send today", {
  skip: reason ?? false,
}, async () => {
  await inOwnSchema("mastra_trips", async (pool, schema) => {
    const store = await PostgresStore.open(pool, { schema });
    const memory = new AgentSessionMemoryStorage(store);
    for (let i = 0; i < 50; i++) await memory.saveMessages({ messages: [message(`warm ${i}`)] });
    // The two appended as one chain statement, which checks that no session holds their ids (the look-up) and the
    // registry row's source and owner, and touches the row. No registry read: the thread's owner is known.
    const turn = await counted(() => memory.saveMessages({ messages: [message("a"), message("b")] }));
    assert.equal(turn, 1);
    // One message: the same statement.
    assert.equal(await counted(() => memory.saveMessages({ messages: [message("c")] })), 1);
    // The last 40: one statement (the thread's registry row, its count and its 40 newest rows).
    const last40 = {
      threadId: "t1",
      perPage: 40,
      orderBy: { field: "createdAt", direction: "DESC" },
    } as const;
    assert.equal(await counted(() => memory.listMessages(last40)), 1);
    assert.equal(await counted(() => memory.listMessages({ ...last40, resourceId: "alice" })), 1);
    const listed = await memory.listMessages(last40);
    assert.equal(listed.messages.length, 40);
    assert.equal(listed.total, 53);
    const newest = listed.messages[0]?.content.parts[0] as { text?: string } | undefined;
    assert.equal(newest?.text, "c");
    // A message saved again (an upsert): the chain finds its id held and writes nothing (1), then the look-up (1)
    // and the replacement in place (10: BEGIN, the head lock, the row's reads and update, the registry touch, COMMIT).
    const again = { ...message("d"), id: "m3" } as MastraDBMessage;
    assert.equal(await counted(() => memory.saveMessages({ messages: [again] })), 12);
    await store.close();
  });
});
