/**
 * The keyless contract's scan of the declared tables (docs/PRIVACY.md, "The declaration of owner data"): alice's
 * words written with her key through every write path the store has (`writesOf`: appends, updates, upserts, imports,
 * overlays, blocks, entries, stream chunks, an agent step's writes, transfers) are in no content, derived or name
 * column of any table the backend's declaration says is not "clear" for a keyed owner. A table declared "sealed" (or
 * "n/a") that holds her words in clear fails, by name; a "clear" one is what PRIVACY.md lists as visible.
 */
import assert from "node:assert/strict";
import type { RegistryCapableStore } from "../../contract/registry.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import type { OwnerDataDeclaration } from "../../store/owner-data.js";
import { msg } from "../contract/harness.js";
import type { Suite } from "../runner.js";
import { ALICE_SECRET, randomKeyring, seedAlice, writesOf } from "./keyless-writes.js";

/** Bob has no key: his words are in clear, which shows the scan finds clear text where it is. */
const BOB_CLEAR = "zqxbobinclearq";

/** The columns of a table the scan reads: whatever can hold an owner's words or what is derived from them. */
function scanned(columns: OwnerDataDeclaration[number]["columns"]): string[] {
  return Object.entries(columns)
    .filter(([, holds]) => holds === "content" || holds === "derived" || holds === "name")
    .map(([column]) => column);
}

/** What the scan needs of a keyless target's storage (keyless.ts KeylessInstance has it). */
export interface ScannedStorage {
  open(keyring: Keyring | undefined): Promise<RegistryCapableStore>;
  rowsHolding?(table: string, columns: readonly string[], text: string): Promise<number | null>;
  close(): Promise<void>;
}

/** Registers the scan of the declared tables (when the target gives its declaration and a scanner). */
export function registerSealedTables(
  suite: Suite,
  declaration: OwnerDataDeclaration,
  create: () => Promise<ScannedStorage>,
): void {
  suite.test(
    "alice's writes with her key, every path: no table declared sealed holds her words",
    async () => {
      const instance = await create();
      try {
        const holding = instance.rowsHolding;
        assert.ok(holding, "a target with a declaration scans its tables (rowsHolding)");
        const keyed = await instance.open(randomKeyring(["alice"]));
        try {
          const alice = await seedAlice(keyed);
          for (const [what, write] of writesOf(keyed, alice, ALICE_SECRET)) {
            await write().catch((error: unknown) => {
              throw new Error(`${what}, with her key, failed: ${(error as Error).message}`);
            });
          }
          const bob = await keyed.registry.create({ id: "bob-chat", name: "bob", owner: "bob" });
          await keyed.session(bob.id).appendMessage(msg("b0", `bob says ${BOB_CLEAR}`));
        } finally {
          await keyed.close();
        }
        const inClear: string[] = [];
        const bobFound: string[] = [];
        for (const table of declaration) {
          const columns = scanned(table.columns);
          if (columns.length === 0) continue;
          if (table.sealed !== "clear" && ((await holding(table.table, columns, ALICE_SECRET)) ?? 0) > 0)
            inClear.push(`${table.table} (declared ${table.sealed})`);
          if (((await holding(table.table, columns, BOB_CLEAR)) ?? 0) > 0) bobFound.push(table.table);
        }
        assert.ok(bobFound.length > 0, "the scan finds an owner's words where they are in clear");
        assert.deepEqual(inClear, [], "tables holding alice's words in clear, against the declaration");
      } finally {
        await instance.close();
      }
    },
  );
}
