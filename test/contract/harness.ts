import assert from "node:assert/strict";
import type { SessionError } from "../../src/errors.js";
import type { SessionStore } from "../../src/store/types.js";
import type { WritePolicyOptions } from "../../src/store/write-policy.js";
import type { SessionMessage } from "../../src/types.js";

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
  let store = await target.create(policy);
  const holder = { store };
  try {
    return await body(store);
  } finally {
    store = holder.store;
    if (target.destroy) await target.destroy(store);
    else await store.close();
  }
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

/** Asserts that `promise` rejects with a SessionError of `code`. */
export async function rejectsWithCode(
  promise: Promise<unknown>,
  code: string,
  pattern?: RegExp,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.equal(
      (error as SessionError).name === "SessionError" || (error as SessionError).code !== undefined,
      true,
    );
    assert.equal(
      (error as SessionError).code,
      code,
      `expected code ${code}, got ${(error as Error).message}`,
    );
    if (pattern) assert.match((error as Error).message, pattern);
    return true;
  });
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
