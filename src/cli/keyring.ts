/**
 * The app's keyring in the CLI, the viewer and the MCP server (docs/PRIVACY.md, "Tools and the keyring"): loaded
 * from `--keyring <module>` or derived from `--master-key-file <file>`, and what a command says when a store holds
 * encrypted owners and was opened without it.
 */
import type { PostgresStore } from "../postgres/store.js";
import { recordsOwnerKeys } from "../sql/owner-keys/sqlite.js";
import { SqliteStore } from "../sqlite/store.js";
import { type Keyring, masterKeyring } from "../store/crypto/keyring.js";
import { type ParsedArgs, stringOption } from "./args.js";
import { CliError, KEYRING_NEEDED, UsageError } from "./errors.js";
import { readKeyFile } from "./key-file.js";
import { moduleExport } from "./module.js";
import type { OpenedStore } from "./store.js";

/** The keyring `--keyring` or `--master-key-file` gives, or undefined when neither is given. */
export async function loadKeyring(
  command: string,
  values: ParsedArgs["values"],
): Promise<Keyring | undefined> {
  const module = stringOption(values, "keyring");
  const keyFile = stringOption(values, "master-key-file");
  if (module !== undefined && keyFile !== undefined)
    throw new UsageError("pass --keyring or --master-key-file, not both", command);
  if (keyFile !== undefined) return masterKeyring(readKeyFile(keyFile, "--master-key-file"));
  if (module === undefined) return undefined;
  // A function is a factory (an app whose keys are unwrapped from a KMS first): its answer is the keyring.
  let found = await moduleExport(module, "keyring", "keyring");
  if (typeof found === "function") found = await (found as () => unknown)();
  if (typeof (found as Keyring | null)?.key !== "function") {
    throw new CliError(
      `${module} must export a Keyring (named "keyring" or default): an object with key(owner), or a function returning one`,
      "INVALID_ARGUMENT",
    );
  }
  return found as Keyring;
}

/**
 * Whether the store has recorded an owner's key (`owner`), or any owner's: one indexed read of the key checks,
 * which every SQLite and Postgres store has. False on a store of another kind.
 */
export async function holdsOwnerKeys(opened: OpenedStore, owner?: string): Promise<boolean> {
  const { store } = opened;
  if (store instanceof SqliteStore) return recordsOwnerKeys(store.driver, owner);
  if (opened.kind !== "postgres") return false;
  // Postgres is loaded only when a URL names it (`pg` is optional): its store is known by the kind, not the class.
  const postgres = store as PostgresStore;
  const keys = await import("../sql/owner-keys/postgres.js");
  return keys.recordsOwnerKeys(await postgres.ready(), postgres.tables, owner);
}

/**
 * Refuses (`DECRYPT_FAILED`, {@link KEYRING_NEEDED}) to read `owner`'s data from a store opened without a keyring
 * when that owner's key is recorded: its search would find nothing instead of saying why.
 */
export async function requireOwnerKeyring(
  opened: OpenedStore,
  owner: string | undefined,
  keyring: Keyring | undefined,
): Promise<void> {
  if (owner === undefined || keyring !== undefined) return;
  if (await holdsOwnerKeys(opened, owner))
    throw new CliError(`${KEYRING_NEEDED} (owner ${JSON.stringify(owner)} is one)`, "DECRYPT_FAILED");
}
