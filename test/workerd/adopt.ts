/**
 * Adoption inside a real Durable Object: the real reference package (agents@0.22.0, bundled into the Worker) writes
 * its tables through the object's own `sql` tag, then agent-session opens the same storage and adopts them. What
 * both read back travels as JSON to the test, which compares them.
 */
import { AgentSearchProvider, Session, SqliteStore } from "../../src/index.js";
import { registryFields, writeReferenceSqlite } from "../fixtures/reference-data.js";

type SqlSource = ConstructorParameters<typeof SqliteStore>[0];

/** What a store (ours) reads back of the data the reference wrote, in the snapshot's shape. */
async function view(store: SqliteStore, chatId: string) {
  const registry = await store.registry.list();
  const histories: [string, string[]][] = [];
  for (const id of [...registry.map((s) => s.id), ""].sort()) {
    histories.push([id, (await store.session(id).getHistory()).map((m) => m.id)]);
  }
  const chat = store.session(chatId);
  const session = Session.create(store)
    .forSession(chatId)
    .withContext("memory", { description: "Facts", maxTokens: 200 })
    .withContext("notes", { description: "Notes", provider: new AgentSearchProvider(store) })
    .withCachedPrompt();
  const notes = new AgentSearchProvider(store);
  notes.init("notes");
  return {
    sessions: registry.map(registryFields).sort((a, b) => a.name.localeCompare(b.name)),
    histories,
    chat: (await chat.getHistory()).filter((m) => !m.id.startsWith("compaction_")),
    branchesOfFirst: (await chat.getBranches("u1")).map((m) => m.id),
    compactions: (await chat.getCompactions()).length,
    blocks: [
      [`memory_${chatId}`, await store.blocks.getBlock(`memory_${chatId}`)],
      [`_system_prompt_${chatId}`, await store.blocks.getBlock(`_system_prompt_${chatId}`)],
    ],
    prompt: await session.freezeSystemPrompt(),
    notesSearch: await notes.search("deploy"),
    search: (await session.search("Friday")).map((hit) => hit.id),
  };
}

/** The reference writes its tables, then our store opens the same storage (adopting them) and reads them back. */
export async function adoptWrite(source: SqlSource): Promise<object> {
  const snap = await writeReferenceSqlite(source as never);
  const store = new SqliteStore(source);
  try {
    return {
      snap: {
        ...snap,
        sessions: [...snap.sessions].sort((a, b) => a.name.localeCompare(b.name)),
        histories: [...snap.histories].sort(([a], [b]) => (a < b ? -1 : 1)),
        chat: snap.chat.filter((m) => !m.id.startsWith("compaction_")),
        blocks: [...snap.blocks],
      },
      report: store.adopted,
      ours: await view(store, snap.chatId),
    };
  } finally {
    await store.close();
  }
}

/** After a restart: the adoption is recorded (nothing runs again) and the adopted data is all there. */
export async function adoptRead(source: SqlSource): Promise<object> {
  const store = new SqliteStore(source);
  try {
    const chat = (await store.registry.list()).find((s) => s.name === "first chat");
    if (!chat) throw new Error("the adopted registry row of the chat is missing");
    return { adopted: store.adopted, ours: await view(store, chat.id) };
  } finally {
    await store.close();
  }
}
