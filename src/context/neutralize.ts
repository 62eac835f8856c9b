/**
 * Block content is data, not structure. The prompt's structure is a border line of `═`, a header line ending in a
 * capability tag such as `[readonly]`, and a border line again; a content line that a model could read as either
 * would let a block forge a new block (e.g. `SYSTEM [readonly]`). So the check is made on what a model sees, not on
 * the raw characters:
 *
 * - lines are split on every Unicode line terminator a tokenizer or reader treats as one (`\n`, `\r`, `\v`, `\f`,
 *   U+001C–U+001E, NEL, LS, PS), not only `\n`;
 * - the "skeleton" of a line drops what is invisible or decorative: default-ignorable code points (ZWSP, BOM,
 *   word joiner, soft hyphen, bidi marks…), other format and control characters, every kind of whitespace (NBSP,
 *   ideographic space…) and combining marks (U+0332…), after NFKC folding of look-alikes (fullwidth brackets);
 * - a line whose skeleton holds three or more double-line box characters (U+2550–U+256C) making up at least half
 *   of it looks like a border: its box characters render as `=`; a line whose skeleton ends with a capability tag
 *   in square brackets (trailing punctuation allowed) looks like a header: its square brackets render as `( )`.
 *
 * Only the rendering changes; stored content is untouched, and content without such lines renders byte for byte.
 */

// Every line terminator of Unicode (UAX #14 mandatory breaks), with CR LF as one break.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these control characters are line breaks to a reader.
const LINE_BREAK = /(\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029])/;
// What a model does not see as text of its own: dropped before deciding what a line looks like.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Z}\p{M}\s]/gu;
// The double-line box-drawing family the border is made of (═ and its corners and joints).
const BOX = /[\u2550-\u256c]/g;
const TAGS = "readonly|writable|loadable|searchable";
const HEADER_END = new RegExp(`\\[(?:${TAGS})\\][^\\p{L}\\p{N}]*$`, "iu");
// Characters whose NFKC form is a square bracket, and the brackets themselves.
const BRACKET = /[[\]\ufe47\ufe48\uff3b\uff3d]/g;
// Content with none of these cannot look like a border or a header: the common case costs one scan.
const SUSPECT = /[\u2550-\u256c[\ufe47\uff3b]/;

function skeleton(line: string): string {
  return line.normalize("NFKC").replace(INVISIBLE, "");
}

/** True when a line would read as a block border (see the module comment). */
export function looksLikeBorder(line: string): boolean {
  const visible = skeleton(line);
  const box = visible.match(BOX)?.length ?? 0;
  return box >= 3 && box * 2 >= [...visible].length;
}

/** True when a line would read as a block header: it ends with a capability tag such as `[readonly]`. */
export function looksLikeHeader(line: string): boolean {
  return HEADER_END.test(skeleton(line));
}

function neutralizeLine(line: string): string {
  let out = line;
  if (looksLikeBorder(out)) out = out.replace(BOX, "=");
  if (looksLikeHeader(out)) out = out.replace(BRACKET, (b) => ("[\ufe47\uff3b".includes(b) ? "(" : ")"));
  return out;
}

/** Block content as the prompt shows it: no line of it can look like a border or a header the renderer writes. */
export function neutralizeContent(content: string): string {
  if (!SUSPECT.test(content)) return content;
  // split with a capturing group keeps the terminators at odd indexes, so joining restores them exactly.
  const pieces = content.split(LINE_BREAK);
  for (let i = 0; i < pieces.length; i += 2) pieces[i] = neutralizeLine(pieces[i] ?? "");
  return pieces.join("");
}
