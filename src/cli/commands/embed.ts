import { errorMessage } from "../../errors.js";
import { isEmbeddingModel } from "../../search/vectors/embed.js";
import type { BackfillOptions, Embedder, VectorChannel } from "../../search/vectors/types.js";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { moduleExport } from "../module.js";
import { counted } from "../output.js";
import { startProgress } from "../progress.js";

/** The embedder a module exports: `embedder`, else its default export. */
export async function loadEmbedder(path: string): Promise<Embedder> {
  const embedder = await moduleExport(path, "embedder", "embedder");
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

/** The embedder of `embed --reset` without `--embedder`: the reset embeds nothing, so it is never called. */
const noEmbedder = async (): Promise<number[][]> => {
  throw new Error("embed --reset without --embedder embeds nothing");
};

/** `embed`: backfills the vector channel of an existing store (after forgetting its vectors, with --reset). */
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
    "pgvector when the server has it, else a plain table. Texts the embedder refused are counted and the newest " +
    "listed with its reasons; they are sent again only with --retry-failed. --reset first forgets every vector " +
    "(for a new embedding model) and then embeds every message with --embedder; without --embedder it only " +
    "forgets them. Exits with 1 when some messages could not be embedded.",
  positionals: [],
  required: 0,
  options: {
    embedder: {
      type: "string",
      value: "<module>",
      description: "the module exporting the embedder (required unless --reset alone)",
    },
    "batch-size": { type: "string", value: "<n>", description: "texts per embedder call (default 64)" },
    dimensions: {
      type: "string",
      value: "<n>",
      description: "the embedder's vector size (default: learned)",
    },
    plain: { type: "boolean", description: "SQLite: a plain vector table instead of sqlite-vec" },
    reset: {
      type: "boolean",
      description: "forget every vector first (a new embedding model); alone, only that",
    },
    "retry-failed": { type: "boolean", description: "send the texts the embedder refused again" },
  },
  examples: [
    "agent-session embed --embedder ./embedder.mjs",
    "agent-session embed --db postgres://localhost/app --embedder ./embedder.mjs --batch-size 32",
    "agent-session embed --reset --embedder ./new-model.mjs",
  ],
  async run(context) {
    const { command, args } = context;
    const path = stringOption(args.values, "embedder");
    const reset = args.values.reset === true;
    const retryFailed = args.values["retry-failed"] === true;
    if (path === undefined && !reset) {
      throw new UsageError(
        "embed needs --embedder <module> (or --reset alone, to forget the vectors)",
        command,
      );
    }
    if (reset && retryFailed) {
      throw new UsageError("--retry-failed is implied by --reset: a reset forgets the refusals too", command);
    }
    const batchSize = positiveInt(args.values, "batch-size", command);
    const dimensions = positiveInt(args.values, "dimensions", command);
    if (
      path === undefined &&
      (batchSize !== undefined || dimensions !== undefined || args.values.plain === true)
    ) {
      throw new UsageError("--batch-size, --dimensions and --plain need --embedder", command);
    }
    const embedder = path === undefined ? noEmbedder : await loadEmbedder(path);
    let lastError: string | undefined;
    const { store } = await context.open("read", {
      embedder,
      onEmbedError: (error) => {
        lastError = errorMessage(error);
      },
      ...(dimensions === undefined ? {} : { embedDimensions: dimensions }),
      ...(args.values.plain === true ? { vectorIndex: "plain" as const } : {}),
    });
    const vectors = (store as { vectors?: VectorChannel & { index?: string } }).vectors;
    if (!vectors) throw new CliError("this store has no vector channel", "UNSUPPORTED");
    if (reset) await vectors.reset();
    if (path === undefined) {
      if (context.out.json) await context.out.result({ reset: true });
      else
        await context.out.line(
          "Forgot every vector: run embed --embedder <module> to embed the messages again.",
        );
      return;
    }
    const result = await backfill(context, vectors, {
      ...(batchSize === undefined ? {} : { batchSize }),
      ...(retryFailed ? { retryFailed } : {}),
    });
    await report(context, vectors, result, reset);
    if (result.failed > 0) {
      throw new CliError(
        `${counted(result.failed, "message")} could not be embedded: ${lastError ?? "unknown error"}`,
        "EMBEDDER",
      );
    }
  },
};

type RunContext = Parameters<Command["run"]>[0];

// The backfill with a progress bar.
async function backfill(
  { io, progress }: RunContext,
  vectors: VectorChannel,
  options: BackfillOptions,
): Promise<{ embedded: number; failed: number }> {
  const bar = startProgress(io, progress, "embed", 0, "messages");
  let shown = 0;
  try {
    return await vectors.backfill({
      ...options,
      onProgress: (done, total) => {
        bar.setTotal(total);
        bar.increment(done - shown);
        shown = done;
      },
    });
  } finally {
    bar.stop();
  }
}

// The counts after the run, and the refused texts: how many, and the newest with the embedder's reasons.
async function report(
  { out }: RunContext,
  vectors: VectorChannel & { index?: string },
  result: { embedded: number; failed: number },
  reset: boolean,
): Promise<void> {
  const status = await vectors.status();
  const failures = status.failures ?? [];
  if (out.json) {
    await out.result({
      ...result,
      index: vectors.index,
      current: status.embedded,
      pending: status.pending,
      refused: status.failed ?? 0,
      failures,
      ...(reset ? { reset } : {}),
    });
    return;
  }
  await out.line(
    `${reset ? "Forgot every vector. " : ""}Embedded ${counted(result.embedded, "message")} (${result.failed} failed) ` +
      `into ${vectors.index}; ${status.embedded} have current vectors, ${status.pending} wait.`,
  );
  if (status.failed === undefined) return;
  await out.line(
    `${counted(status.failed, "text")} refused by the embedder (sent again with --retry-failed or once changed)` +
      `${status.failed > failures.length ? `, the newest ${failures.length}` : ""}:`,
  );
  for (const { sessionId, messageId, reason } of failures) {
    await out.line(`  ${sessionId} ${messageId}: ${reason}`);
  }
}
