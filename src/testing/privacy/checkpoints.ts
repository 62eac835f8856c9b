/**
 * A LangGraph thread's rows written straight through a store's checkpoint tables (contract/checkpoints.ts), so the
 * privacy suites reach them without LangGraph: a checkpoint, a channel value at two versions (the second stored as
 * a delta of the first, `text` in both the shared prefix and the suffix), and two pending writes, each holding `text`
 * (the second a copy of the value, which a store may keep as a reference to it).
 */
import { type CheckpointCapableStore, hasCheckpoints } from "../../contract/checkpoints.js";
import type { SessionStore } from "../../contract/store.js";

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** Writes the thread's rows into session `sessionId` when the store keeps checkpoints; answers whether it did. */
export async function seedCheckpoints(
  store: SessionStore,
  sessionId: string,
  text: string,
): Promise<boolean> {
  if (!hasCheckpoints(store)) return false;
  await writeCheckpoints(store, sessionId, text, "c");
  return true;
}

/** One step of the thread: checkpoint `id` and a messages list that grew, with a pending write (each with `text`). */
export async function writeCheckpoints(
  store: CheckpointCapableStore,
  sessionId: string,
  text: string,
  id: string,
): Promise<void> {
  const messages = Array.from({ length: 4 }, (_, i) => ({
    role: "user",
    content: `${text} message ${i} padded`,
  }));
  const checkpoint = (n: number) => ({
    sessionId,
    ns: "",
    id: `${id}${n}`,
    parentId: n === 0 ? null : `${id}${n - 1}`,
    type: "json",
    data: bytes({ v: 4, id: `${id}${n}`, note: text }),
    metadataType: "json",
    metadata: bytes({ source: "loop", step: n, note: text }),
    versions: { messages: String(n + 1) },
  });
  const values = (n: number) => [
    { channel: "messages", version: String(n + 1), type: "json", data: bytes(messages.slice(0, n + 3)) },
  ];
  await store.checkpoints.put(checkpoint(0), values(0));
  await store.checkpoints.put(checkpoint(1), values(1));
  await store.checkpoints.putWrites(
    sessionId,
    "",
    `${id}1`,
    [
      { taskId: "t", idx: 0, channel: "messages", type: "json", data: bytes(text), taskPath: "" },
      // Held by the value at version 2: stored as a reference to it (sql/checkpoints/write-refs.ts).
      {
        taskId: "t",
        idx: 1,
        channel: "messages",
        type: "json",
        data: bytes(messages.slice(0, 4)),
        taskPath: "",
      },
    ],
    false,
  );
}
