/**
 * Function words: they carry the grammar of a question, not its subject, so in ranked recall they neither make a
 * message a candidate nor count towards how much of the query it matches. A model asks "When did Caroline go to
 * the LGBTQ support group?"; only "caroline", "lgbtq", "support" and "group" say what to look for. Inside a quoted
 * phrase every word counts.
 *
 * English is the default. A question in German, French, Spanish, Italian, Portuguese or Dutch ("Wann ist Caroline
 * zur Selbsthilfegruppe gegangen?") drops its own language's function words instead: the lists overlap with other
 * languages' content words (German "die", French "son", Spanish "sin"), so one language's list applies to a query,
 * chosen by its words (see functionWords). Other languages have no list: every word of theirs counts.
 */
import { foldToken } from "./tokens.js";

// The common core of the usual English lists (SMART, NLTK, Lucene).
const ENGLISH =
  "a about above after again against all also am an and any are as at be been before being below between both but " +
  "by can could did do does doing don down during each either ever few for from further had has have having he her " +
  "here hers herself him himself his how i if in into is it its itself just let me might more most must my myself " +
  "no nor not now of off on once only or other ought our ours ourselves out over own same shall she should so some " +
  "such than that the their theirs them themselves then there these they this those through to too under until up " +
  "upon us very was we were what when where whether which while who whom whose why will with would yet you your " +
  "yours yourself yourselves s t d ll m re ve";

// Articles, pronouns, prepositions, conjunctions, auxiliaries and question words of each language. Words are looked
// up folded (case and diacritics), as the search compares them: "Für", "für" and "fur" are one word.
const OTHER_LANGUAGES: readonly string[] = [
  // German
  "der die das den dem des ein eine einen einem einer eines und oder aber doch nicht kein keine keinen keinem " +
    "ich du er sie es wir ihr mich dich sich uns euch mir dir ihm ihn ihnen mein meine meinen meinem dein deine " +
    "sein seine seinen seinem ihre ihren ihrem unser unsere euer eure ist sind war waren bin bist hat haben hatte " +
    "hatten habe hast wird werden wurde wurden worden gewesen kann können konnte muss müssen soll sollte will " +
    "wollte zu zum zur im in am an auf aus bei beim mit nach von vom vor für über unter durch um gegen ohne bis " +
    "seit als wie wann wo woher wohin was wer wen wem wessen warum wieso weshalb welche welcher welches welchen " +
    "ob dass daß so auch noch schon nur sehr denn dann da hier dort man wenn weil diese dieser dieses diesen",
  // French
  "le la les l un une des du de d au aux et ou mais ne pas ni que qu qui quoi quand où comment pourquoi quel " +
    "quelle quels quelles je j tu il elle on nous vous ils elles me m te se s lui leur leurs mon ma mes ton ta " +
    "tes son sa ses notre nos votre vos ce cet cette ces c est sont était étaient été être avoir a ai as avons " +
    "avez ont avait avaient eu dans sur sous avec sans pour par chez en y vers entre depuis pendant comme si très " +
    "plus aussi déjà encore",
  // Spanish
  "el la los las lo un una unos unas y e o u pero ni no que qué quien quién quienes cuando cuándo donde dónde " +
    "como cómo por porque cual cuál cuales de del al a en con sin sobre para entre hasta desde hacia durante yo " +
    "tú tu él ella ello nosotros nosotras vosotros ellos ellas me te se nos os le les mi mis su sus nuestro " +
    "nuestra es son era eran fue fueron ser estar está están estaba estaban ha han he has hemos había habían hay " +
    "muy más ya también este esta estos estas ese esa esos esas",
  // Italian
  "il lo la i gli le l un uno una di del dello della dei degli delle da dal dalla dai al allo alla ai agli " +
    "alle in nel nella nei negli nelle con su sul sulla per tra fra e ed o ma non che chi cosa quando dove " +
    "come perché quale quali io tu lui lei noi voi loro mi ti si ci vi mio mia miei tuo tua suo sua suoi " +
    "nostro nostra è sono era erano stato stata essere ha hanno ho hai abbiamo aveva avevano molto più anche " +
    "già questo questa questi quello quella",
  // Portuguese
  "o a os as um uma uns umas de do da dos das ao aos à às em no na nos nas num numa por pelo pela para com " +
    "sem sobre entre até desde e ou mas não que quem quando onde como porque qual quais eu tu ele ela nós vós " +
    "eles elas me te se lhe lhes meu minha seu sua nosso nossa é são era eram foi foram ser estar está estão " +
    "estava tem têm tinha há muito mais também já este esta isso isto esse essa aquele aquela",
  // Dutch
  "de het een en of maar niet geen ik jij je hij zij ze wij we jullie mij me mijn jouw zijn haar ons onze hun " +
    "is was waren ben bent heeft hebben had hadden wordt worden werd kan kunnen moet zal zou in op aan bij met " +
    "van voor naar uit over onder door tot om als dan dat die dit deze wat wie waar wanneer hoe waarom welke ook " +
    "nog al er hier daar zo heel",
];

/** Folded word → its lists (bit 0: English; bit n: OTHER_LANGUAGES[n - 1]): one lookup gives every list holding it. */
const LISTS = new Map<string, number>();
function addList(words: string, bit: number): void {
  for (const word of words.split(" ")) {
    const folded = foldToken(word);
    LISTS.set(folded, (LISTS.get(folded) ?? 0) | bit);
  }
}
addList(ENGLISH, 1);
for (const [at, words] of OTHER_LANGUAGES.entries()) addList(words, 1 << (at + 1));
const LANGUAGES = OTHER_LANGUAGES.length + 1;

function listsOf(word: string): number {
  return LISTS.get(foldToken(word)) ?? 0;
}

/** True for a word on the English list, whatever the query's language (what a query chosen as English drops). */
export function isEnglishFunctionWord(word: string): boolean {
  return (listsOf(word) & 1) !== 0;
}

/**
 * Which of a query's words are function words, one flag per word: English's, unless another language's list holds
 * at least two of them that English's does not, and more than English's holds — so a loanword or a title ("Die
 * Hard") never switches the language. Languages that hold equally many apply together (a Portuguese question
 * shares "de", "a", "que" with Spanish); a tie with English is English.
 */
export function functionWords(words: readonly string[]): boolean[] {
  const lists = words.map(listsOf);
  const counts = new Int32Array(LANGUAGES);
  for (const bits of lists) {
    // A word on English's list counts for English alone: "in" of "the man in the war" is no German evidence.
    if (bits & 1) counts[0]!++;
    else
      for (let language = 1; bits >> language !== 0; language++) counts[language]! += (bits >> language) & 1;
  }
  let most = 0;
  for (let language = 1; language < LANGUAGES; language++) most = Math.max(most, counts[language]!);
  let chosen = 1;
  if (most >= 2 && most > counts[0]!) {
    chosen = 0;
    for (let language = 1; language < LANGUAGES; language++)
      if (counts[language] === most) chosen |= 1 << language;
  }
  return lists.map((bits) => (bits & chosen) !== 0);
}
