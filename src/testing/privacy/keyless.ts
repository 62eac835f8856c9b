/**
 * The keyless contract (docs/PRIVACY.md, "Refusals"): a store opened without an encrypted owner's key (no keyring,
 * a keyring without it, a wrong key), over storage where another store sealed that owner's content, refuses every
 * write of the owner's content and every search kept to the owner with `DECRYPT_FAILED`, writes nothing of it in
 * clear, and leaves the keyed store reading the owner's rows as they were; and a store that found a session in
 * clear refuses its next append once another store gave the owner a key; and the owner's ids and hashes written with
 * her key are keyed, never an unkeyed digest of her content (keyed-ids.ts). The target opens several stores over
 * one storage, as several processes would.
 */
import assert from "node:assert/strict";
import type { RegistryCapableStore } from "../../contract/registry.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import type { OwnerDataDeclaration } from "../../store/owner-data.js";
import { msg } from "../contract/harness.js";
import { suiteOf, type TestApi } from "../runner.js";
import { registerEntryKeys } from "./entry-keys.js";
import { type KeyRace, registerKeyRace } from "./key-race.js";
import { registerKeyedIds } from "./keyed-ids.js";
import {
  ALICE_SECRET,
  assertRefused,
  assertUntouched,
  CLEAR,
  keyless,
  randomKeyring,
  seedAlice,
} from "./keyless-writes.js";
import { registerSealedTables } from "./sealed-tables.js";

/** One storage of the suite, which stores are opened over. */
export interface KeylessInstance {
  /** Opens another store over the storage, with `keyring` (undefined: none), as another process would. */
  open(keyring: Keyring | undefined): Promise<RegistryCapableStore>;
  /** How many places of the storage (file bytes, pages) hold `text`, once the stores opened are closed. */
  traces(text: string): Promise<number>;
  /**
   * Optional, with the target's `declaration`: how many rows of `table` hold `text` in any of `columns` (null when
   * the table does not exist: one made on first use), read once the stores opened are closed.
   */
  rowsHolding?(table: string, columns: readonly string[], text: string): Promise<number | null>;
  /**
   * Optional: opens a store without a keyring (as `open(undefined)`) whose next write after `arm()` is delayed past
   * another store's first key of `owner`: a store opened with `keyring` records it (as its first sealed write of the
   * owner does) after the write looked the owner's key up and before the write's statement — or, where the backend
   * lets no other writer in during the write's transaction (SQLite), before that transaction. Not timing: a hook
   * on the store's connection. Without it the race case is skipped.
   */
  race?(keyring: Keyring, owner: string): Promise<KeyRace>;
  /** Removes the storage. */
  close(): Promise<void>;
}

/** A backend under the keyless contract. */
export interface KeylessTarget {
  name: string;
  /** A fresh, empty storage. */
  create(): Promise<KeylessInstance>;
  /**
   * Optional: the backend's declaration of owner data (src/store/owner-data.ts); with it, and the instance's
   * `rowsHolding`, every table it does not declare "clear" is scanned for an encrypted owner's words (sealed-tables.ts).
   */
  declaration?: OwnerDataDeclaration;
}

/** Registers the keyless contract's tests for `target` with the test runner's `{ describe, it }`. */
export function runKeylessContract(api: TestApi, target: KeylessTarget): void {
  const suite = suiteOf(api);
  suite.describe(`keyless contract: ${target.name}`, () => {
    suite.test(
      "a store without alice's key refuses every write and search of hers, nothing in clear",
      async () => {
        const instance = await target.create();
        try {
          const keyed = await instance.open(randomKeyring(["alice"]));
          try {
            const alice = await seedAlice(keyed);
            for (const { name, keyring } of keyless()) {
              const store = await instance.open(keyring);
              try {
                await assertRefused(store, alice, name);
                // Another owner's sessions are written in clear as ever.
                const bob = await store.registry.create({ id: `bob-${name}`, name: "bob", owner: "bob" });
                await store.session(bob.id).appendMessage(msg("b0", "bob"));
              } finally {
                await store.close();
              }
            }
            await assertUntouched(keyed, alice);
          } finally {
            await keyed.close();
          }
          assert.equal(await instance.traces(CLEAR), 0, "no refused write reached the storage");
          assert.equal(
            await instance.traces(ALICE_SECRET),
            0,
            "alice's content, her stream included, is sealed",
          );
        } finally {
          await instance.close();
        }
      },
    );

    suite.test("an append in clear is refused once another store gave the owner a key", async () => {
      const instance = await target.create();
      try {
        const plain = await instance.open(undefined);
        const keyed = await instance.open(randomKeyring(["bob"]));
        try {
          const { id } = await plain.registry.create({ id: "bob-chat", name: "bob", owner: "bob" });
          // Two appends in clear: the second relies on what the first found (its write checks it).
          await plain.session(id).appendMessage(msg("c0"));
          await plain.session(id).appendMessage(msg("c1"));
          // Another store seals bob's next message: bob has a recorded key now.
          await keyed.session(id).appendMessage(msg("k2", `k2 ${CLEAR}`));
          await assert.rejects(plain.session(id).appendMessage(msg("c3", `c3 ${CLEAR}`)), {
            code: "DECRYPT_FAILED",
          });
          const ids = (await keyed.session(id).getHistory()).map((m) => m.id);
          assert.deepEqual(ids, ["c0", "c1", "k2"], "the keyed store reads every row but the refused one");
        } finally {
          await plain.close();
          await keyed.close();
        }
        assert.equal(await instance.traces(CLEAR), 0);
      } finally {
        await instance.close();
      }
    });
    registerKeyRace(suite, () => target.create());
    registerKeyedIds(suite, () => target.create());
    registerEntryKeys(suite, () => target.create());
    if (target.declaration) registerSealedTables(suite, target.declaration, () => target.create());
  });
}
