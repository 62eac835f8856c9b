/**
 * English function words: they carry the grammar of a question, not its subject, so in ranked recall they neither
 * make a message a candidate nor count towards how much of the query it matches. A model asks "When did Caroline go
 * to the LGBTQ support group?"; only "caroline", "lgbtq", "support" and "group" say what to look for. Inside a quoted
 * phrase every word counts. The list is the common core of the usual English lists (SMART, NLTK, Lucene); other
 * languages have no stop words here, so every word of theirs counts.
 */
const WORDS =
  "a about above after again against all also am an and any are as at be been before being below between both but " +
  "by can could did do does doing don down during each either ever few for from further had has have having he her " +
  "here hers herself him himself his how i if in into is it its itself just let me might more most must my myself " +
  "no nor not now of off on once only or other ought our ours ourselves out over own same shall she should so some " +
  "such than that the their theirs them themselves then there these they this those through to too under until up " +
  "upon us very was we were what when where whether which while who whom whose why will with would yet you your " +
  "yours yourself yourselves s t d ll m re ve";

const STOP_WORDS: ReadonlySet<string> = new Set(WORDS.split(" "));

/** True for a folded, lower-case word that carries no subject of its own (see the list above). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}
