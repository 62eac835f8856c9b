/**
 * Who said it (docs/RECALL.md#who-said-it): a question that names exactly one of the authors of the turns it found
 * ("What did Caroline paint?") asks about that author's turns, so among turns that match as many of its words (one
 * tier of rank.ts: the same count for their exchange and for themselves) that author's come first, each part in its
 * order. A turn that matches more of the question's words is never passed: the author only breaks ties of word
 * counts, within the first `AUTHOR_BAND` × limit turns of the text ranking, whose authors are read from their stored
 * JSON (a message's `metadata.author`, message/author.ts). The name is matched as fact-subject.ts matches a fact's
 * subject: every word of it is a word of the question, so "Dana Smith" is named by "Dana Smith" and not by "Dana".
 * On LoCoMo dev, of the answer turns of questions naming one speaker, 96 % are that speaker's own, yet the other's
 * turns filled 38 % of the text ranking's first 10.
 */
import type { RankedCandidate } from "./rank.js";
import { foldedWords } from "./tokens.js";

/**
 * How many pages of the text ranking have their authors read: twice the page, so a turn just below it can take the
 * place of a turn on it that ties its word counts (on LoCoMo dev one page already holds every gain at R@10; two, four,
 * eight pages and the whole ranking gave the same figures).
 */
export const AUTHOR_BAND = 2;

/** How many of the text ranking's first turns have their authors read for a page of `limit` hits. */
export function authorBand(limit: number): number {
  return AUTHOR_BAND * limit;
}

/**
 * The one author among `authors` whose every word is a word of `query` (by its folded words: "Dana" and "dana" are
 * one author), or undefined when the query names none of them or several (it asks about them together).
 */
export function namedAuthor(query: string, authors: Iterable<string>): string | undefined {
  const asked = new Set(foldedWords(query));
  let named: string | undefined;
  for (const author of authors) {
    const words = foldedWords(author);
    if (words.length === 0 || !words.every((word) => asked.has(word))) continue;
    const key = words.join(" ");
    if (named !== undefined && named !== key) return undefined;
    named = key;
  }
  return named;
}

/**
 * `ranked` with the turns of the author `query` names (see namedAuthor; `authorOf` gives the authors of the first
 * `band` turns) first within each tier of equal word counts among those turns, each part in its order; the rest, and
 * a ranking whose query names no author or several, unchanged.
 */
export function authorsFirst(
  ranked: readonly RankedCandidate[],
  authorOf: ReadonlyMap<number, string>,
  query: string,
  band: number,
): readonly RankedCandidate[] {
  if (authorOf.size === 0) return ranked;
  const named = namedAuthor(query, new Set(authorOf.values()));
  if (named === undefined) return ranked;
  const keys = new Map<string, boolean>();
  const isNamed = (seq: number) => {
    const author = authorOf.get(seq);
    if (author === undefined) return false;
    let is = keys.get(author);
    if (is === undefined) {
      is = foldedWords(author).join(" ") === named;
      keys.set(author, is);
    }
    return is;
  };
  const end = Math.min(band, ranked.length);
  const out = ranked.slice();
  for (let start = 0; start < end; ) {
    const { window, matched } = ranked[start]!;
    let stop = start + 1;
    while (stop < end && ranked[stop]!.window === window && ranked[stop]!.matched === matched) stop++;
    const tier = ranked.slice(start, stop);
    const first = tier.filter(({ seq }) => isNamed(seq));
    if (first.length > 0 && first.length < tier.length)
      out.splice(start, tier.length, ...first, ...tier.filter(({ seq }) => !isNamed(seq)));
    start = stop;
  }
  return out;
}
