import type { VectorStoreOptions } from "../search/vectors/types.js";
import type { Keyring } from "../store/crypto/keyring.js";
import type { ArgSpec, ParsedArgs } from "./args.js";
import type { Io, Output } from "./output.js";
import type { OpenedStore, OpenMode } from "./store.js";

/** What a command runs with. */
export interface CommandContext {
  command: string;
  args: ParsedArgs;
  out: Output;
  io: Io;
  /** The `--db` value (or its default). */
  db: string;
  /** The app's keyring (`--keyring`, `--master-key-file`), which `open` uses; undefined when none was given. */
  keyring: Keyring | undefined;
  /** Whether to draw a progress bar on stderr. */
  progress: boolean;
  /**
   * Opens the database (with a vector channel when `vectors` has an embedder, with `keyring`, by default the app's);
   * the runner closes it when the command returns.
   */
  open(mode: OpenMode, vectors?: VectorStoreOptions, keyring?: Keyring): Promise<OpenedStore>;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); only long-running commands (serve) wait on it. */
  untilStopped(): Promise<void>;
}

/** One CLI command: its arguments, its help and what it does. */
export interface Command extends ArgSpec {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Paragraphs for `<command> --help`. */
  description: string;
  examples: string[];
  run(context: CommandContext): Promise<void>;
}
