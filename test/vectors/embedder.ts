/**
 * A deterministic test embedder: hashed bag-of-words over a small synonym map, so texts that share no word but
 * name the same concept ("automobile" / "car") get near vectors, which no text search can find.
 */
const CONCEPTS: Record<string, string> = {
  car: "vehicle",
  cars: "vehicle",
  automobile: "vehicle",
  sedan: "vehicle",
  doctor: "medic",
  physician: "medic",
  clinic: "medic",
  guitar: "music",
  violin: "music",
  concert: "music",
};

export const TEST_DIMENSIONS = 64;

function bucket(word: string): number {
  let hash = 0x811c9dc5;
  for (const ch of word) hash = Math.imul(hash ^ (ch.codePointAt(0) ?? 0), 0x01000193);
  return (hash >>> 0) % TEST_DIMENSIONS;
}

/** The vector of one text: a count per hashed concept (a word outside the map is its own concept). */
export function testVector(text: string): number[] {
  const vector = new Array<number>(TEST_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    const concept = CONCEPTS[word] ?? word;
    // Concepts weigh more than other words, as a real model's meaning outweighs filler.
    vector[bucket(concept)] = (vector[bucket(concept)] as number) + (CONCEPTS[word] ? 3 : 1);
  }
  return vector;
}

/** An embedder with switches: `broken` makes every call throw, `calls` counts the texts it was given. */
export function testEmbedder(): {
  embed: (texts: string[]) => Promise<number[][]>;
  state: { broken: boolean; calls: number; texts: number; hang: boolean };
} {
  const state = { broken: false, calls: 0, texts: 0, hang: false };
  return {
    state,
    embed: async (texts) => {
      state.calls++;
      state.texts += texts.length;
      if (state.hang) return new Promise<number[][]>(() => undefined);
      if (state.broken) throw new Error("embedding service unavailable");
      return texts.map(testVector);
    },
  };
}
