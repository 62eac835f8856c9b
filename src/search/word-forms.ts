/**
 * The forms of English words that a word's family (query.ts: its prefix) cannot reach, each matched exactly:
 *
 * - **Irregular lemmas.** A question asks "When did Melanie go camping?" and the memory holds "we went camping":
 *   the prefix finds paint, painted, painting, but never went, bought or met. Questions about the past take the base
 *   form after "did" while what they ask about was told in the past tense. The list is the common irregular verbs
 *   (and nouns) of English grammars, without the lemmas whose forms are other common words (bear/born, bite/bit,
 *   lie/lay, rise/rose, wind/wound, grind/ground, bind/bound, tear/tears, spring), those whose past is their base
 *   (cut, put, set: the prefix finds them) and the auxiliaries (be, do, have: function words). Base form, -s, -ing,
 *   past, past participle.
 * - **Short words.** A word of three letters or fewer matches exactly (a prefix "dog*" stands for hundreds of index
 *   terms), so "dog" missed "dogs" and "try" missed "tried": its regular inflections are listed instead.
 */
import { isEnglishFunctionWord } from "./stopwords.js";

const FORMS =
  "arise arises arising arose arisen, awake awakes awaking awoke awoken, beat beats beating beaten, " +
  "become becomes becoming became, begin begins beginning began begun, bend bends bending bent, " +
  "bleed bleeds bleeding bled, blow blows blowing blew blown, break breaks breaking broke broken, " +
  "breed breeds breeding bred, bring brings bringing brought, build builds building built, " +
  "burn burns burning burnt, buy buys buying bought, catch catches catching caught, " +
  "choose chooses choosing chose chosen, cling clings clinging clung, come comes coming came, " +
  "creep creeps creeping crept, deal deals dealing dealt, dig digs digging dug, " +
  "draw draws drawing drew drawn, dream dreams dreaming dreamt, drink drinks drinking drank drunk, " +
  "drive drives driving drove driven, eat eats eating ate eaten, fall falls falling fell fallen, " +
  "feed feeds feeding fed, feel feels feeling felt, fight fights fighting fought, " +
  "find finds finding found, flee flees fleeing fled, fly flies flying flew flown, " +
  "forbid forbids forbidding forbade forbidden, forget forgets forgetting forgot forgotten, " +
  "forgive forgives forgiving forgave forgiven, freeze freezes freezing froze frozen, " +
  "get gets getting got gotten, give gives giving gave given, go goes going went gone, " +
  "grow grows growing grew grown, hang hangs hanging hung, hear hears hearing heard, " +
  "hide hides hiding hid hidden, hold holds holding held, keep keeps keeping kept, " +
  "kneel kneels kneeling knelt, know knows knowing knew known, lay lays laying laid, " +
  "lead leads leading led, lean leans leaning leant, leap leaps leaping leapt, " +
  "learn learns learning learnt, leave leaves leaving left, lend lends lending lent, " +
  "light lights lighting lit, lose loses losing lost, make makes making made, mean means meaning meant, " +
  "meet meets meeting met, pay pays paying paid, ride rides riding rode ridden, " +
  "ring rings ringing rang rung, run runs running ran, say says saying said, see sees seeing saw seen, " +
  "seek seeks seeking sought, sell sells selling sold, send sends sending sent, " +
  "shake shakes shaking shook shaken, shine shines shining shone, shoot shoots shooting shot, " +
  "show shows showing showed shown, shrink shrinks shrinking shrank shrunk, sing sings singing sang sung, " +
  "sink sinks sinking sank sunk, sit sits sitting sat, sleep sleeps sleeping slept, " +
  "slide slides sliding slid, speak speaks speaking spoke spoken, speed speeds speeding sped, " +
  "spend spends spending spent, spin spins spinning spun, stand stands standing stood, " +
  "steal steals stealing stole stolen, stick sticks sticking stuck, sting stings stinging stung, " +
  "strike strikes striking struck, swear swears swearing swore sworn, sweep sweeps sweeping swept, " +
  "swim swims swimming swam swum, swing swings swinging swung, take takes taking took taken, " +
  "teach teaches teaching taught, tell tells telling told, think thinks thinking thought, " +
  "throw throws throwing threw thrown, understand understands understanding understood, " +
  "wake wakes waking woke woken, wear wears wearing wore worn, weep weeps weeping wept, " +
  "win wins winning won, write writes writing wrote written, child children, man men, woman women, " +
  "person people, foot feet, tooth teeth, mouse mice";

/** Each form's group of forms (one array per lemma, shared, so two forms of a lemma compare identical). */
const GROUP_OF: ReadonlyMap<string, readonly string[]> = (() => {
  const map = new Map<string, readonly string[]>();
  for (const line of FORMS.split(", ")) {
    const group = Object.freeze(line.split(" "));
    for (const form of group) if (!map.has(form)) map.set(form, group);
  }
  return map;
})();

/**
 * The forms of the irregular lemma `word` (lower-case ASCII) belongs to, itself included; undefined when it belongs
 * to none. The same array for every form of one lemma.
 */
export function irregularForms(word: string): readonly string[] | undefined {
  return GROUP_OF.get(word);
}

const VOWELS = "aeiou";

/**
 * The regular inflections of a short word (two or three letters), which match exactly only: as a prefix it would
 * stand for hundreds of index terms ("dog*"), so without these "dog" missed "dogs" and "try" missed "tried". Plural
 * and third person (-s, -es, -ies), past (-ed, -d, -ied, doubling hug → hugged) and -ing, spelt by the usual rules;
 * the word itself first. Undefined for other words.
 */
export function shortWordForms(word: string): readonly string[] | undefined {
  if (word.length < 2 || word.length > 3 || !isLowerAscii(word) || isEnglishFunctionWord(word))
    return undefined;
  const last = word[word.length - 1]!;
  const before = word[word.length - 2]!;
  const consonantY = last === "y" && !VOWELS.includes(before);
  if (consonantY) {
    const stem = word.slice(0, -1);
    return [word, `${stem}ies`, `${stem}ied`, `${word}ing`];
  }
  if (last === "e") {
    // fee → fees, feeing (not "feed", another word); tie → tied, tying; use → used, using.
    if (before === "e") return [word, `${word}s`, `${word}ing`];
    const ing = before === "i" ? `${word.slice(0, -2)}ying` : `${word.slice(0, -1)}ing`;
    return [word, `${word}s`, `${word}d`, ing];
  }
  // -es after a sibilant (boxes, buses); a short word in -o takes -s (zoos, twos, egos).
  const plural = "sxz".includes(last) ? `${word}es` : `${word}s`;
  // One syllable ending consonant-vowel-consonant doubles its consonant (hug → hugged, hugging), never w, x or y.
  const doubles =
    word.length === 3 &&
    !VOWELS.includes(last) &&
    !"wxy".includes(last) &&
    VOWELS.includes(before) &&
    !VOWELS.includes(word[0]!);
  const stem = doubles ? word + last : word;
  return [word, plural, `${stem}ed`, `${stem}ing`];
}

// Letters a-z only, checked by character code: every plain query word passes here, and the plain parse keeps
// regular expressions off its path (query.ts).
function isLowerAscii(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (code < 0x61 || code > 0x7a) return false;
  }
  return true;
}
