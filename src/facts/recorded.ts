// A recorded extractor: facts derived earlier (by people, or a model run once) replayed as the batches arrive.
import type { ExtractedFact, ExtractFunction } from "./types.js";

/** A fact as it was recorded: its text, whom it is about, and the ids of the messages it comes from. */
export interface RecordedFact {
  text: string;
  about?: string | null;
  sources: readonly string[];
}

/**
 * An extractor that answers each batch with the recorded facts whose first source is in it, naming only their
 * sources in the batch (the check refuses a source the learner did not show). Stateless, so a learner that resumes
 * elsewhere replays alike; a fact whose sources span two batches names only those of the first (a window that
 * covers a sitting keeps them together). Benchmarks replay the facts a dataset ships this way (LoCoMo's
 * observations), so that learning costs no model call.
 */
export function recordedExtractor(facts: readonly RecordedFact[], name = "recorded"): ExtractFunction {
  const byFirst = new Map<string, RecordedFact[]>();
  for (const fact of facts) {
    const first = fact.sources[0];
    if (first === undefined) continue;
    const list = byFirst.get(first) ?? [];
    list.push(fact);
    byFirst.set(first, list);
  }
  const extract: ExtractFunction = async ({ messages }) => {
    const ids = new Set(messages.map((message) => message.id));
    return messages.flatMap((message) =>
      (byFirst.get(message.id) ?? []).map(
        (fact): ExtractedFact => ({
          text: fact.text,
          about: fact.about ?? null,
          sources: [...new Set(fact.sources.filter((id) => ids.has(id)))],
        }),
      ),
    );
  };
  Object.defineProperty(extract, "name", { value: name });
  return extract;
}
