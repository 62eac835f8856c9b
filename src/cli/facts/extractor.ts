// The extractor of `agent-session learn`: a module's extractor function or AI SDK model, or a recorded facts file.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { errorMessage } from "../../errors.js";
import { isLanguageModel } from "../../facts/extractor.js";
import { type RecordedFact, recordedExtractor } from "../../facts/recorded.js";
import type { ExtractFunction, Extractor } from "../../facts/types.js";
import { CliError } from "../errors.js";
import { moduleExport } from "../module.js";

/** The extractor a module exports: `extractor`, else its default export. */
export async function loadExtractor(path: string): Promise<Extractor> {
  const extractor = await moduleExport(path, "extractor", "extractor");
  if (typeof extractor !== "function" && !isLanguageModel(extractor)) {
    throw new CliError(
      `${path} must export an extractor (named "extractor" or default): a function (input) => facts or an AI SDK language model`,
      "INVALID_ARGUMENT",
    );
  }
  return extractor as Extractor;
}

/** A recorded fact of the file, kept to one session when it names one (`sessionId`, or LoCoMo's `conv`). */
interface FileFact extends RecordedFact {
  sessionId?: string;
}

/**
 * The extractor replaying a recorded facts file, and its producer (`recorded:<file name>`). The file is a JSON
 * array of `{ text, about?, sources, sessionId? }` (sources: message ids), or LoCoMo's observations
 * (`[{ conv, observations: [{ speaker, text, sources }] }]`, `conv` the session id, `speaker` the `about`). A fact
 * naming a session is replayed in that session only: message ids repeat across sessions (LoCoMo's `D1:3`).
 */
export function loadRecorded(path: string): { extractor: ExtractFunction; producer: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const reason = errorMessage(error).replace(/\s*\n\s*/g, " ");
    throw new CliError(`cannot read the recorded facts ${path}: ${reason}`, "INVALID_ARGUMENT");
  }
  const facts = recordedFacts(path, parsed);
  const name = basename(path).replace(/\.json$/i, "");
  const bySession = new Map<string, FileFact[]>();
  for (const fact of facts) {
    const key = fact.sessionId ?? "";
    bySession.set(key, [...(bySession.get(key) ?? []), fact]);
  }
  const anywhere = recordedExtractor(bySession.get("") ?? [], name);
  const replays = new Map(
    [...bySession].filter(([key]) => key !== "").map(([key, list]) => [key, recordedExtractor(list, name)]),
  );
  const extractor: ExtractFunction = async (input) => {
    const own = replays.get(input.sessionId);
    return [...(await anywhere(input)), ...(own ? await own(input) : [])];
  };
  return { extractor, producer: `recorded:${name}` };
}

function recordedFacts(path: string, parsed: unknown): FileFact[] {
  const bad = (where: string, what: string) => new CliError(`${path}: ${where} ${what}`, "INVALID_ARGUMENT");
  if (!Array.isArray(parsed))
    throw bad("the file", "must be a JSON array of recorded facts { text, about?, sources }");
  const facts: FileFact[] = [];
  parsed.forEach((entry: unknown, i) => {
    const item = entry as Record<string, unknown> | null;
    if (item !== null && typeof item === "object" && Array.isArray(item.observations)) {
      if (typeof item.conv !== "string") throw bad(`[${i}].conv`, "must be the session id (a string)");
      const session = item.conv;
      item.observations.forEach((observation: unknown, j) => {
        const o = observation as Record<string, unknown> | null;
        facts.push(
          recordedFact(`[${i}].observations[${j}]`, { ...o, about: o?.speaker, sessionId: session }, bad),
        );
      });
    } else facts.push(recordedFact(`[${i}]`, item, bad));
  });
  return facts;
}

function recordedFact(
  where: string,
  item: Record<string, unknown> | null,
  bad: (where: string, what: string) => CliError,
): FileFact {
  if (item === null || typeof item !== "object")
    throw bad(where, "must be an object { text, about?, sources }");
  const { text, about, sources, sessionId } = item;
  if (typeof text !== "string" || text.trim() === "")
    throw bad(`${where}.text`, "must be a non-empty string");
  if (about !== undefined && about !== null && typeof about !== "string")
    throw bad(`${where}.about`, "must be a string or null");
  if (!Array.isArray(sources) || sources.length === 0 || sources.some((id) => typeof id !== "string"))
    throw bad(`${where}.sources`, "must be a non-empty array of message ids");
  if (sessionId !== undefined && typeof sessionId !== "string")
    throw bad(`${where}.sessionId`, "must be a string");
  return {
    text,
    about: about ?? null,
    sources: sources as string[],
    ...(sessionId === undefined ? {} : { sessionId }),
  };
}
