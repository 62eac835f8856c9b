/**
 * The privacy contract's embedder: deterministic, so the suite knows the bytes of the vectors its session leaves. A
 * text holding the suite's secret gets a vector whose first four float32 values are, as little-endian bytes, the
 * ASCII string {@link VECTOR_MARK} (each value in [0.125, 0.25): exponent byte `>`, mantissa bytes ASCII), so a
 * target's `traces(text)` finds a stored vector in files and pages as it finds words. Every other text gets a hashed
 * bag of words. The store scales vectors to unit length (search/vectors/embed.ts `unit`): the marked vector has
 * length exactly 1 in double arithmetic (its other values are k / 2^26 whose squares fill what the four leave), so
 * the scale is 1 and the stored values are the ones given.
 */

/** Dimensions of the suite's vectors. */
const DIMENSIONS = 32;

/** What a marked vector's first 16 bytes are, as text: four float32 values, each ending in its exponent byte `>`. */
export const VECTOR_MARK = "zqv>ecq>xpr>ivq>";

// The marked values: 2^-26 granularity (float32's in [0.125, 0.25)), as integers m with value m / 2^26.
const SCALE = 2 ** 26;

function markValues(): number[] {
  const values: number[] = [];
  for (let i = 0; i < VECTOR_MARK.length; i += 4) {
    const bytes = new Uint8Array([...VECTOR_MARK.slice(i, i + 4)].map((c) => c.charCodeAt(0)));
    values.push(new Float32Array(bytes.buffer)[0] as number);
  }
  return values;
}

/** The marked vector: the four values, then k / 2^26 values whose squares make the length exactly 1. */
function markedVector(): number[] {
  const vector = markValues();
  // In units of 2^-52: the squares of m / 2^26 are exact integers there, and 1 is 2^52 (below 2^53: exact).
  let rest = 2 ** 52 - vector.reduce((sum, v) => sum + (v * SCALE) ** 2, 0);
  while (rest > 0) {
    let k = Math.floor(Math.sqrt(rest));
    while (k * k > rest) k--;
    while ((k + 1) * (k + 1) <= rest) k++;
    vector.push(k / SCALE);
    rest -= k * k;
  }
  if (vector.length > DIMENSIONS) throw new Error("the marked vector does not fit the suite's dimensions");
  return [...vector, ...new Array<number>(DIMENSIONS - vector.length).fill(0)];
}

const MARKED = markedVector();

function bucket(word: string): number {
  let hash = 0x811c9dc5;
  for (const ch of word) hash = Math.imul(hash ^ (ch.codePointAt(0) ?? 0), 0x01000193);
  return (hash >>> 0) % DIMENSIONS;
}

/** An embedder giving every text holding `secret` the marked vector, any other a hashed bag of its words. */
export function privacyEmbedder(secret: string): (texts: string[]) => Promise<number[][]> {
  return async (texts) =>
    texts.map((text) => {
      if (text.includes(secret)) return [...MARKED];
      const vector = new Array<number>(DIMENSIONS).fill(0);
      for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) vector[bucket(word)]! += 1;
      // A text without words still gets a vector (a zero one matches nothing; the store keeps it as given).
      if (!vector.some((v) => v > 0)) vector[0] = 1;
      return vector;
    });
}
