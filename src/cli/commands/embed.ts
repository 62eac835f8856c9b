import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { errorMessage } from "../../errors.js";
import { isEmbeddingModel } from "../../search/vectors/embed.js";
import type { Embedder, VectorChannel } from "../../search/vectors/types.js";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { counted } from "../output.js";
import { startProgress } from "../progress.js";

/** The embedder a module exports: `embedder`, else its default export. */
export async function loadEmbedder(path: string): Promise<Embedder> {
  let module: { embedder?: unknown; default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as typeof module;
  } catch (error) {
    throw new CliError(`cannot load the embedder module ${path}: ${errorMessage(error)}`, "INVALID_ARGUMENT");
  }
  const embedder = module.embedder ?? module.default;
  if (typeof embedder !== "function" && !isEmbeddingModel(embedder)) {
    throw new CliError(
      `${path} must export an embedder (named "embedder" or default): a function (texts) => vectors or an AI SDK embedding model`,
      "INVALID_ARGUMENT",
    );
  }
  return embedder as Embedder;
}

function positiveInt(values: Record<string, unknown>, name: string, command: string): number | undefined {
  const text = stringOption(values as never, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`--${name} must be a whole number >= 1, got ${JSON.stringify(text)}`, command);
  }
  return value;
}

/** `embed`: backfills the vector channel of an existing store. */
export const embed: Command = {
  name: "embed",
  summary: "compute the vectors of hybrid recall for every message that lacks a current one",
  description:
    "Embeds every stored message without a current vector (a store made before vectors, messages written while " +
    "the embedder failed, or by a process without one), in batches, with a progress bar; messages whose vector is " +
    "current are skipped, so it can be run again at any time. --embedder names a JavaScript module (resolved from " +
    "the current directory) exporting the embedder as `embedder` or as its default export: a function " +
    "(texts: string[]) => Promise<number[][]>, or an AI SDK embedding model (the `ai` package must be installed). " +
    "On SQLite the vectors go into a sqlite-vec index (npm install sqlite-vec) unless --plain; on Postgres into " +
    "pgvector when the server has it, else a plain table. Exits with 1 when some messages could not be embedded.",
  positionals: [],
  required: 0,
  options: {
    embedder: {
      type: "string",
      value: "<module>",
      description: "required: the module exporting the embedder",
    },
    "batch-size": { type: "string", value: "<n>", description: "texts per embedder call (default 64)" },
    dimensions: {
      type: "string",
      value: "<n>",
      description: "the embedder's vector size (default: learned)",
    },
    plain: { type: "boolean", description: "SQLite: a plain vector table instead of sqlite-vec" },
  },
  examples: [
    "agent-session embed --embedder ./embedder.mjs",
    "agent-session embed --db postgres://localhost/app --embedder ./embedder.mjs --batch-size 32",
  ],
  async run({ command, args, out, open, io, progress }) {
    const path = stringOption(args.values, "embedder");
    if (path === undefined) throw new UsageError("embed needs --embedder <module>", command);
    const batchSize = positiveInt(args.values, "batch-size", command);
    const dimensions = positiveInt(args.values, "dimensions", command);
    const embedder = await loadEmbedder(path);
    let lastError: string | undefined;
    const { store } = await open("read", {
      embedder,
      onEmbedError: (error) => {
        lastError = errorMessage(error);
      },
      ...(dimensions === undefined ? {} : { embedDimensions: dimensions }),
      ...(args.values.plain === true ? { vectorIndex: "plain" as const } : {}),
    });
    const vectors = (store as { vectors?: VectorChannel & { index?: string } }).vectors;
    if (!vectors) throw new CliError("this store has no vector channel", "UNSUPPORTED");
    const bar = startProgress(io, progress, "embed", 0, "messages");
    let shown = 0;
    let result: { embedded: number; failed: number };
    try {
      result = await vectors.backfill({
        ...(batchSize === undefined ? {} : { batchSize }),
        onProgress: (done, total) => {
          bar.setTotal(total);
          bar.increment(done - shown);
          shown = done;
        },
      });
    } finally {
      bar.stop();
    }
    const status = await vectors.status();
    const summary = { ...result, index: vectors.index, current: status.embedded, pending: status.pending };
    if (out.json) await out.result(summary);
    else {
      await out.line(
        `Embedded ${counted(result.embedded, "message")} (${result.failed} failed) into ${vectors.index}; ` +
          `${status.embedded} have current vectors, ${status.pending} wait.`,
      );
    }
    if (result.failed > 0) {
      throw new CliError(
        `${counted(result.failed, "message")} could not be embedded: ${lastError ?? "unknown error"}`,
        "EMBEDDER",
      );
    }
  },
};
