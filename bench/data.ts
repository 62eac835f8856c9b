/**
 * Deterministic benchmark data: a fixed English-like vocabulary sampled with Zipf(s=1) frequencies,
 * ~500-byte messages, and the interleaved multi-session timeline of the big store.
 */

/** The message shape every target stores: AI SDK UIMessage-compatible, one text part. */
export interface BenchMessage {
  id: string;
  role: string;
  parts: { type: "text"; text: string }[];
}

/** One message of a bulk load, in insertion order; parentId null means a new root. */
export interface StoreRow {
  seq: number;
  sessionId: string;
  message: BenchMessage;
  parentId: string | null;
  parentSeq: number | null;
}

/** Returns a seeded PRNG (mulberry32) yielding floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMON = `the of and to a in is it that for you was with on as are be this have from or by not but at an
they which one all were we can there when your if will do each about how up out them then she many some so these
would other into has more her two like him see time could no make than first been its who now people my made over
did down only way find use may long little very after words called just where most know get through back much before
go good new write our used me man too any day same right look think also around another came come work three word
must because does part even place well such here take why things help put years different away again off went old
number great tell men say small every found still between name should home big give air line set own under read last
never us left end along while might next sound below saw something thought both few those always looked show large
often together asked house world going want file function value data error message session string object return
option default command server request response table query index memory branch commit version module package config
system process thread buffer stream event handler client token context summary history search result search model
agent tool input output state update delete insert select create remove store cache page level entry record field
type class method call test build run start stop open close write read load save parse format limit count size path
node tree root leaf parent child depth list array map key order group merge split sort filter match range block`;

const ONSETS = [
  "b",
  "c",
  "d",
  "f",
  "g",
  "h",
  "l",
  "m",
  "n",
  "p",
  "r",
  "s",
  "t",
  "v",
  "w",
  "br",
  "cl",
  "st",
  "tr",
];
const VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o", "ea", "ou"];
const CODAS = ["", "", "n", "r", "s", "t", "l", "nd", "st", "ck", "m", "x"];
const SUFFIXES = ["", "", "", "", "", "", "s", "ing", "ed", "er", "ly"];

/** Vocabulary size: ranks 1..VOCAB_SIZE, rank 1 the most frequent. */
export const VOCAB_SIZE = 8000;

function buildVocabulary(): string[] {
  const words: string[] = [];
  const seen = new Set<string>();
  for (const w of COMMON.split(/\s+/)) {
    if (w && !seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  const r = rng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  while (words.length < VOCAB_SIZE) {
    const syllables = 2 + (r() < words.length / VOCAB_SIZE ? 1 : 0);
    let w = "";
    for (let i = 0; i < syllables; i++)
      w += pick(ONSETS) + pick(VOWELS) + (i === syllables - 1 ? pick(CODAS) : "");
    w += pick(SUFFIXES);
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
}

/** The fixed vocabulary, ordered by frequency rank (index 0 = rank 1). */
export const VOCABULARY: readonly string[] = buildVocabulary();

const CUMULATIVE = (() => {
  const c = new Float64Array(VOCAB_SIZE);
  let sum = 0;
  for (let i = 0; i < VOCAB_SIZE; i++) {
    sum += 1 / (i + 1);
    c[i] = sum;
  }
  return c;
})();

/** Draws one word index with Zipf(s=1) probability. */
export function zipfIndex(next: () => number): number {
  const u = next() * CUMULATIVE[VOCAB_SIZE - 1]!;
  let lo = 0;
  let hi = VOCAB_SIZE - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Builds English-like text of `words` Zipf-drawn words in sentences of 6–16 words. */
export function makeText(next: () => number, words = 75): string {
  const out: string[] = [];
  let sentenceLeft = 0;
  for (let i = 0; i < words; i++) {
    let w = VOCABULARY[zipfIndex(next)]!;
    if (sentenceLeft === 0) {
      w = w.charAt(0).toUpperCase() + w.slice(1);
      sentenceLeft = 6 + Math.floor(next() * 11);
    }
    sentenceLeft--;
    out.push(sentenceLeft === 0 || i === words - 1 ? `${w}.` : w);
  }
  return out.join(" ");
}

/** Builds one message with a 75-word text part (~500 bytes as JSON). */
export function makeMessage(next: () => number, id: string, role: string): BenchMessage {
  return { id, role, parts: [{ type: "text", text: makeText(next) }] };
}

/** Layout of the big store: how many messages, which sessions, which are linear chains. */
export interface StorePlan {
  total: number;
  sessions: { id: string; size: number; chain: boolean }[];
  /** Linear chain sessions by depth, e.g. 1000 → "s2". */
  chains: Map<number, string>;
  /** Ordinary (branching, ~900-message) sessions. */
  typical: string[];
}

/** Nominal history depths; those larger than a fifth of the store are left out at small scales. */
export const HISTORY_DEPTHS = [100, 1_000, 10_000, 100_000];

/** Plans the store: 1M × scale messages, 1000 × scale sessions, chains of the depths that fit. */
export function planStore(scale: number): StorePlan {
  const total = Math.max(2_000, Math.round(1_000_000 * scale));
  const nSessions = Math.max(10, Math.round(1_000 * scale));
  const depths = HISTORY_DEPTHS.filter((d) => d <= total / 5);
  const sessions: StorePlan["sessions"] = [];
  const chains = new Map<number, string>();
  depths.forEach((d, i) => {
    chains.set(d, `s${i + 1}`);
    sessions.push({ id: `s${i + 1}`, size: d, chain: true });
  });
  const nTypical = nSessions - depths.length;
  const rest = total - depths.reduce((a, b) => a + b, 0);
  const r = rng(11);
  const weights = Array.from({ length: nTypical }, () => 0.5 + r());
  const wsum = weights.reduce((a, b) => a + b, 0);
  let assigned = 0;
  const typical: string[] = [];
  weights.forEach((w, i) => {
    const size = i === nTypical - 1 ? rest - assigned : Math.max(1, Math.round((rest * w) / wsum));
    assigned += size;
    const id = `s${depths.length + i + 1}`;
    typical.push(id);
    sessions.push({ id, size, chain: false });
  });
  return { total, sessions, chains, typical };
}

/**
 * Yields the store's rows: ~50 sessions active at once, picked in proportion to what they have left,
 * so each session's rows are scattered over the table; 3 % of typical appends fork (mostly 1–4
 * steps back from the leaf, 5 % of forks anywhere).
 */
export function* storeRows(plan: StorePlan, seed = 42): Generator<StoreRow> {
  const r = rng(seed);
  const queue = [...plan.sessions];
  const active: { id: string; left: number; chain: boolean; path: number[] }[] = [];
  let seq = 0;
  for (;;) {
    while (active.length < 50 && queue.length > 0) {
      const s = queue.shift()!;
      active.push({ id: s.id, left: s.size, chain: s.chain, path: [] });
    }
    if (active.length === 0) return;
    let totalLeft = 0;
    for (const a of active) totalLeft += a.left;
    let u = r() * totalLeft;
    let idx = 0;
    while (idx < active.length - 1 && u >= active[idx]!.left) u -= active[idx++]!.left;
    const s = active[idx]!;
    if (!s.chain && s.path.length > 4 && r() < 0.03) {
      const back = r() < 0.05 ? Math.floor(r() * (s.path.length - 1)) + 1 : 1 + Math.floor(r() * 4);
      s.path.length -= back;
    }
    const parentSeq = s.path.length > 0 ? s.path[s.path.length - 1]! : null;
    const role = s.path.length % 2 === 0 ? "user" : "assistant";
    yield {
      seq,
      sessionId: s.id,
      message: makeMessage(r, `m${seq}`, role),
      parentId: parentSeq === null ? null : `m${parentSeq}`,
      parentSeq,
    };
    s.path.push(seq);
    seq++;
    if (--s.left === 0) active.splice(idx, 1);
  }
}

/** Splits `items` into arrays of `size` (the last one shorter, never empty): bulk loads write one per transaction. */
export function* inBatches<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Yields a single linear session of `length` messages (the prefix of the append workload). */
export function* chainRows(sessionId: string, length: number, seed = 5): Generator<StoreRow> {
  const r = rng(seed);
  for (let seq = 0; seq < length; seq++) {
    const parentSeq = seq === 0 ? null : seq - 1;
    yield {
      seq,
      sessionId,
      message: makeMessage(r, `m${seq}`, seq % 2 === 0 ? "user" : "assistant"),
      parentId: parentSeq === null ? null : `m${parentSeq}`,
      parentSeq,
    };
  }
}

/** Frequency bands of single-term queries, by word rank. */
export const BANDS = { common: [10, 100], mid: [100, 2_000], rare: [2_000, VOCAB_SIZE] } as const;

/** `n` queries of `words` words, cycling through the frequency bands (a word per band draw): everyday searches. */
export function bandQueries(n: number, words: number, seed: number): string[] {
  const r = rng(seed);
  const bands = Object.values(BANDS);
  return Array.from({ length: n }, (_, i) => {
    const [lo, hi] = bands[i % bands.length]!;
    return Array.from({ length: words }, () => VOCABULARY[lo + Math.floor(r() * (hi - lo))]!).join(" ");
  });
}

/** One search query: a term from a frequency band and a typical session to scope it to. */
export interface BenchQuery {
  band: keyof typeof BANDS;
  term: string;
  sessionId: string;
}

/** Makes `n` queries cycling through the bands, each scoped to a random typical session. */
export function makeQueries(n: number, typical: readonly string[], seed = 99): BenchQuery[] {
  const r = rng(seed);
  const names = Object.keys(BANDS) as (keyof typeof BANDS)[];
  return Array.from({ length: n }, (_, i) => {
    const band = names[i % names.length]!;
    const [lo, hi] = BANDS[band];
    const term = VOCABULARY[lo + Math.floor(r() * (hi - lo))]!;
    return { band, term, sessionId: typical[Math.floor(r() * typical.length)]! };
  });
}
