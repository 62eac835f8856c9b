import type { SessionMessage } from "../../contract/message.js";
import type { SessionStore, WritePolicyOptions } from "../../contract/store.js";
import { disposing } from "../runner.js";

export { rejectsWithCode } from "../runner.js";

/** A backend under test: how to make a fresh, empty store and how to dispose of it. */
export interface ContractTarget {
  name: string;
  /** A fresh, empty store; `policy` is passed through to the store's options (reserved keys, size cap). */
  create(policy?: WritePolicyOptions): Promise<SessionStore>;
  destroy?(store: SessionStore): Promise<void>;
  /** Close and reopen the same storage (for persistence checks); omitted for purely in-process stores. */
  reopen?(store: SessionStore): Promise<SessionStore>;
}

/** Runs `body` with a fresh store and always disposes of it. */
export async function withStore<T>(
  target: ContractTarget,
  body: (store: SessionStore) => Promise<T>,
  policy?: WritePolicyOptions,
): Promise<T> {
  return disposing(target, await target.create(policy), body);
}

/** A text message. */
export function msg(
  id: string,
  text = `text of ${id}`,
  role = "user",
  extra: Partial<SessionMessage> = {},
): SessionMessage {
  return { id, role, parts: [{ type: "text", text }], ...extra };
}

/** The ids of messages, for compact assertions. */
export function ids(messages: readonly { id: string }[]): string[] {
  return messages.map((m) => m.id);
}

/** Appends a linear chain `prefix0..prefix{n-1}` and returns the ids. */
export async function appendChain(
  store: SessionStore,
  sessionId: string,
  n: number,
  prefix = "m",
): Promise<string[]> {
  const provider = store.session(sessionId);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${prefix}${i}`;
    await provider.appendMessage(msg(id));
    out.push(id);
  }
  return out;
}

/** `items` as an async stream (what the transfer imports read). */
export async function* toAsync<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}
