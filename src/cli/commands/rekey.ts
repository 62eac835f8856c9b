import { SqliteStore } from "../../sqlite/store.js";
import type { Keyring } from "../../store/crypto/keyring.js";
import type { RekeyOptions, RekeyReport } from "../../store/crypto/rekey-options.js";
import { intOption, ownerOption, stringOption } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { readKeyFile } from "../key-file.js";
import { counted } from "../output.js";
import { type Progress, startProgress } from "../progress.js";
import { isPostgresUrl, probeSqlitePath } from "../store.js";

/** A store that rotates keys, and how the command lets go of it. */
interface Rekeying {
  rekey(owner: string, options?: RekeyOptions): Promise<RekeyReport>;
  close(): Promise<void>;
}

/**
 * The store `--db` names, opened with `keyring`: a SQLite file that holds agent-session tables, or Postgres tables
 * that exist (`--schema`, `--table-prefix`; the runner closes those, so `close` leaves them).
 */
async function openRekeying(db: string, keyring: Keyring, open: CommandContext["open"]): Promise<Rekeying> {
  if (isPostgresUrl(db)) {
    const { store } = await open("read", {}, keyring);
    return {
      rekey: (owner, options) => (store as unknown as Rekeying).rekey(owner, options),
      close: async () => {},
    };
  }
  const kind = probeSqlitePath(db, "read");
  if (kind !== "agent-session") throw new CliError(`${db} holds no agent-session tables`, "INVALID_ARGUMENT");
  return new SqliteStore(db, { keyring });
}

/** `rekey`: key rotation of one owner on a SQLite file or Postgres (docs/PRIVACY.md, "Key rotation"). */
export const rekey: Command = {
  name: "rekey",
  summary: "re-encrypt an owner's messages under a new key (resumable)",
  description:
    "Rotates the key of one encrypted owner (docs/PRIVACY.md, Key rotation): re-seals each of its messages, sealed " +
    "under the old key, under the new one, in batches of --batch-size, one transaction each, with the place it got " +
    "to recorded in the same transaction. Interrupted (Ctrl-C stops after the current batch; a crash loses at most " +
    "the batch under way), it is resumed by running the same command again; meanwhile every message reads with " +
    "either key and the app's keyring must answer the new key as key(owner) and the old one in previousKeys(owner). " +
    "A wrong old key is refused (DECRYPT_FAILED) before anything is written. Keys are read from files, each holding " +
    "32 raw bytes or their hex or base64 text, never from the command line or the environment. When it completes, " +
    "destroy the old key (copies of the file taken before the rotation open with it) and run `agent-session purge` " +
    "so the old ciphertext leaves the file's free pages and log (on Postgres: its table pages; see docs/PRIVACY.md). " +
    "With --seal-clear it also seals the owner's rows still in clear (written before it had a key: messages, their " +
    "search index, overlay summaries, blocks, entries, facts, kept stream chunks) under --new-key-file, the owner's " +
    "key; --old-key-file is then needed only when the owner's recorded key is another one. " +
    "A SQLite file or a postgres:// URL (with --schema and --table-prefix where the tables are).",
  positionals: [],
  required: 0,
  options: {
    owner: { type: "string", value: "<id>", description: "required: the owner whose messages are re-sealed" },
    "old-key-file": {
      type: "string",
      value: "<file>",
      description:
        "required (with --seal-clear: when its key changes): the key its messages are sealed under",
    },
    "new-key-file": {
      type: "string",
      value: "<file>",
      description: "required: the key to re-seal them under",
    },
    "batch-size": { type: "string", value: "<n>", description: "messages per transaction (default 200)" },
    "seal-clear": {
      type: "boolean",
      description: "also seal the owner's rows in clear (its history from before it had a key)",
    },
  },
  examples: [
    "agent-session rekey --db chat.db --owner user-42 --old-key-file old.key --new-key-file new.key",
    "agent-session rekey --db chat.db --owner user-42 --old-key-file old.key --new-key-file new.key --progress",
    "agent-session rekey --db postgres://localhost/app --owner user-42 --old-key-file old.key --new-key-file new.key",
    "agent-session rekey --db chat.db --owner user-42 --new-key-file user-42.key --seal-clear",
  ],
  async run({ command, args, db, out, io, progress, untilStopped, open, keyring: appKeyring }) {
    // Its keys are the two files: an app keyring beside them would leave it unclear which key is which.
    if (appKeyring !== undefined)
      throw new UsageError("rekey takes its keys from --old-key-file and --new-key-file only", command);
    const owner = ownerOption(command, args.values);
    if (owner === undefined) throw new UsageError("rekey needs --owner <id>", command);
    const sealClear = args.values["seal-clear"] === true;
    const keyFile = (name: string, required: boolean) => {
      const path = stringOption(args.values, name);
      if (path === undefined && required) throw new UsageError(`rekey needs --${name} <file>`, command);
      return path === undefined ? undefined : readKeyFile(path, `--${name}`);
    };
    const oldKey = keyFile("old-key-file", !sealClear);
    const newKey = keyFile("new-key-file", true)!;
    const batchSize = intOption(command, args.values, "batch-size", 200);
    if (batchSize < 1 || batchSize > 10_000)
      throw new UsageError("--batch-size must be a whole number from 1 to 10000", command);
    // Only this owner has keys: nothing else of the store is opened or sealed by it.
    const keyring: Keyring = {
      key: (o) => (o === owner ? newKey : undefined),
      previousKeys: (o) => (o === owner && oldKey ? [oldKey] : []),
    };
    const store = await openRekeying(db, keyring, open);
    const stop = new AbortController();
    void untilStopped().then(() => stop.abort());
    let bar: Progress | undefined;
    let shown = 0;
    let reached = { done: 0, total: 0 };
    let report: RekeyReport;
    try {
      report = await store.rekey(owner, {
        batchSize,
        sealClear,
        signal: stop.signal,
        onProgress: ({ done, total }) => {
          bar ??= startProgress(io, progress, "rekey", total, "messages");
          bar.increment(done - shown);
          shown = done;
          reached = { done, total };
        },
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      throw new CliError(
        `interrupted after ${reached.done} of ${counted(reached.total, "message")}: every message reads with either key; run the same command again to resume`,
        "INTERRUPTED",
        130,
      );
    } finally {
      bar?.stop();
      await store.close();
    }
    if (out.json) return out.result(report);
    const verb = sealClear ? "Sealed" : "Re-sealed";
    await out.line(
      `${verb} ${counted(report.resealed, "message")} of owner ${JSON.stringify(owner)} under key ${report.keyId}` +
        `${report.resumed ? " (resuming a rotation under way)" : ""}; ${underIt(report.total)}.`,
    );
    await out.line(
      oldKey
        ? "Destroy the old key (copies of the file taken before hold messages under it) and run `agent-session purge`."
        : "Run `agent-session purge` so the clear text leaves the free pages and log (copies taken before hold it).",
    );
  },
};

// The closing words of a finished run: its one message, or all of them, under the key now.
function underIt(total: number): string {
  return total === 1
    ? "its one message is under it now"
    : `all ${counted(total, "message")} are under it now`;
}
