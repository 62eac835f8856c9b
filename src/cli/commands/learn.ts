import { type LearnReport, learnFacts } from "../../facts/learn.js";
import type { Extractor } from "../../facts/types.js";
import { intOption, OWNER_OPTION, ownerOption, stringOption } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { CliError, UsageError } from "../errors.js";
import { loadExtractor, loadRecorded } from "../facts/extractor.js";
import { type LearnTargets, learnTargets } from "../facts/sessions.js";
import { counted } from "../output.js";
import { startProgress } from "../progress.js";

/** Refusals listed after the summary at most (the count says how many there were). */
const SHOWN_REFUSALS = 10;

/** `learn`: learns facts from the sessions' messages not learned yet (learnFacts), with progress. */
export const learn: Command = {
  name: "learn",
  summary: "learn facts from the messages not learned yet (an extractor module or recorded facts)",
  description:
    "Runs the fact learner on demand (learnFacts, docs/FACTS.md) over one session (--session), one owner's " +
    "sessions (--owner) or every registered session (--all), each up to its last message, with a progress bar of " +
    "the sessions done. Facts go to the session's owner when it has one, else to the session. Each session's mark " +
    "remembers how far it was learned, so a second run learns only what was written since. --extractor names a " +
    "JavaScript module (resolved from the current directory) exporting the extractor as `extractor` or as its " +
    "default export: a function (input) => Promise<facts>, or an AI SDK language model (the `ai` package must be " +
    "installed). --recorded replays a JSON file of recorded facts instead ([{ text, about?, sources, sessionId? }] " +
    "with message ids as sources, or LoCoMo's observations), without a model. Prints the facts added, superseded, " +
    "invalidated, dropped as duplicates and refused, and the batches that failed every try (skipped: the mark " +
    "moved past them); exits with 1 when a batch was skipped, naming the extractor's error.",
  positionals: [],
  required: 0,
  options: {
    session: { type: "string", value: "<id>", description: "learn this session" },
    owner: { ...OWNER_OPTION, description: "learn the sessions registered with this owner" },
    all: { type: "boolean", description: "learn every registered session" },
    extractor: {
      type: "string",
      value: "<module>",
      description: "the module exporting the extractor (a function or an AI SDK model)",
    },
    recorded: {
      type: "string",
      value: "<file.json>",
      description: "replay recorded facts instead of a model",
    },
    window: {
      type: "string",
      value: "<n>",
      description: "messages per extractor call (default 20, at most 200)",
    },
    "max-attempts": {
      type: "string",
      value: "<n>",
      description: "tries of a failing batch before it is skipped (default 3)",
    },
  },
  examples: [
    "agent-session learn --all --extractor ./extractor.mjs",
    "agent-session learn --owner user-42 --extractor ./extractor.mjs --window 40",
    "agent-session learn --session demo-deploy --recorded ./facts.json",
  ],
  async run(context) {
    const { command, args, keyring } = context;
    const sessionId = stringOption(args.values, "session");
    const owner = ownerOption(command, args.values);
    const scopes = [sessionId, owner, args.values.all === true ? true : undefined].filter(
      (v) => v !== undefined,
    );
    if (scopes.length !== 1)
      throw new UsageError("learn needs one of --session <id>, --owner <id> or --all", command);
    const modulePath = stringOption(args.values, "extractor");
    const recordedPath = stringOption(args.values, "recorded");
    if ((modulePath === undefined) === (recordedPath === undefined))
      throw new UsageError(
        "learn needs --extractor <module> or --recorded <file.json> (one of them)",
        command,
      );
    const window = bounded(context, "window", 20, 200);
    const maxAttempts = bounded(context, "max-attempts", 3, 100);
    const source: { extractor: Extractor; producer?: string } =
      recordedPath === undefined
        ? { extractor: await loadExtractor(modulePath!) }
        : loadRecorded(recordedPath);
    const opened = await context.open("read");
    const { store } = opened;
    const targets = await learnTargets(opened, keyring, { sessionId, owner });
    const { sessionIds } = targets;
    let { total } = targets;
    const refusals: string[] = [];
    const stop = new AbortController();
    void context.untilStopped().then(() => stop.abort());
    const bar = startProgress(context.io, context.progress, "learn", total, "sessions");
    let report: LearnReport;
    try {
      report = await learnFacts(store, {
        ...source,
        ...(sessionIds === undefined ? {} : { sessionIds }),
        ...(window === undefined ? {} : { window }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        signal: stop.signal,
        // Each failed try is counted in the report, and a skipped batch listed with its error: no warning needed.
        onError: () => undefined,
        onRefused: (reasons, session) => {
          for (const reason of reasons) refusals.push(`${session}: ${reason}`);
          refusals.splice(0, Math.max(0, refusals.length - SHOWN_REFUSALS));
        },
        onProgress: ({ sessions }) => {
          // Sessions registered during an --all run are learned too: the bar grows with them.
          if (sessions > total) {
            total = sessions;
            bar.setTotal(total);
          }
          bar.increment();
        },
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      throw new CliError("stopped: what was learned is kept; run learn again to go on", "STOPPED");
    } finally {
      bar.stop();
    }
    await print(context, report, refusals, targets);
    const [last] = report.skipped.slice(-1);
    if (last !== undefined) {
      throw new CliError(
        `${counted(report.skipped.length, "batch", "batches")} failed every try and ${report.skipped.length === 1 ? "was" : "were"} skipped: ${last.error}`,
        "EXTRACTOR",
      );
    }
  },
};

function bounded(context: CommandContext, name: string, _default: number, max: number): number | undefined {
  if (context.args.values[name] === undefined) return undefined;
  const value = intOption(context.command, context.args.values, name, _default);
  if (value < 1 || value > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}`, context.command);
  return value;
}

// The counts, then the skipped batches with their errors, the sessions another learner held, the newest refusals.
async function print(
  { out }: CommandContext,
  report: LearnReport,
  refusals: string[],
  { leftOut }: LearnTargets,
): Promise<void> {
  if (out.json) {
    await out.result({ ...report, refusals, encrypted: [...leftOut, ...report.encrypted] });
    return;
  }
  await out.line(
    `Learned from ${counted(report.messages, "message")} of ${counted(report.sessions, "session")} ` +
      `in ${counted(report.batches, "batch", "batches")}: ${report.added} added, ${report.superseded} superseded, ` +
      `${report.invalidated} invalidated, ${counted(report.duplicates, "duplicate")} dropped, ` +
      `${report.refused} refused; ${counted(report.skipped.length, "batch", "batches")} skipped.`,
  );
  if (report.skipped.length > 0) {
    await out.line("Skipped after every try (the mark moved past them; their messages are not learned):");
    for (const batch of report.skipped)
      await out.line(
        `  ${batch.sessionId} seq ${batch.fromSeq}-${batch.throughSeq} (${counted(batch.attempts, "try", "tries")}): ${batch.error}`,
      );
  }
  const encrypted = [...leftOut, ...report.encrypted];
  if (encrypted.length > 0)
    await out.line(
      `Left out, their owners being encrypted and the keyring without their key: ${encrypted.join(", ")}`,
    );
  if (report.busy.length > 0)
    await out.line(`Left to another learner that holds them: ${report.busy.join(", ")}`);
  if (report.refused > 0) {
    const newest = report.refused > refusals.length ? `, the newest ${refusals.length}` : "";
    await out.line(`${counted(report.refused, "fact")} refused by the checks${newest}:`);
    for (const line of refusals) await out.line(`  ${line}`);
  }
}
