/**
 * Full-text search documents and queries built in JavaScript, so Postgres matches exactly what the memory and
 * SQLite backends match. Postgres's own parser splits text differently from the query language's tokenizer
 * (`deploy-script` becomes three lexemes, URLs, e-mails and paths become single tokens, non-ASCII handling
 * depends on the server locale), which would shift phrase positions and change results. Instead the indexed
 * `tsvector` is written as a literal from `tokenize` + `foldToken` (lower-case, diacritics stripped), and the
 * `tsquery` is rendered from `parseQuery`'s terms: prefix terms `'root':*` (a word's other forms ORed with it),
 * phrases with `<->`, all ANDed. No dictionary runs, so there are no stop words and no stemmer: word families come
 * from the query language's word-root prefixes and word forms, as on every backend. User text never reaches
 * `to_tsquery`. An encrypted owner's messages hold its blind tokens instead of words (search/blind-tokens.ts), and
 * a search of that owner matches each term as those tokens too (sql/search/postgres-blind.ts says which owners).
 */
import { createHash } from "node:crypto";
import { type BlindTokens, isBlindLike } from "../../../search/blind-tokens.js";
import { otherForms, type QueryTerm } from "../../../search/query.js";
import { foldToken, tokenize } from "../../../search/tokens.js";
import { OWNER_HASH_CHARS, ownerHash } from "../../../store/owner.js";
import type { Layout } from "./layout.js";

// Postgres refuses lexemes over 2047 bytes and vectors over 1 MiB, clamps positions at 16383 (so a phrase past
// that token cannot match) and keeps at most 256 positions per lexeme.
const MAX_LEXEME_BYTES = 2047;
const MAX_POSITION = 16383;
const MAX_POSITIONS = 256;
const MAX_VECTOR_BYTES = 900_000;

// Session lexemes remembered (a session id is at most 256 characters: at most ~300 kB).
const SESSION_LEXEMES = 1024;
const sessionLexemes = new Map<string, string>();

function quoteLexeme(lexeme: string): string {
  // Tokens hold only letters, digits and marks, so this never fires; it keeps the literal safe regardless.
  return `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/**
 * The lexeme that scopes a message to its session inside the search index (a `#` can never come out of the
 * tokenizer, so user text cannot collide with it). Hashed so any session id fits a lexeme; the search joins on
 * the real session id as well, so a hash collision could only cost time, never return a wrong hit.
 */
export function sessionLexeme(sessionId: string): string {
  let lexeme = sessionLexemes.get(sessionId);
  if (lexeme === undefined) {
    lexeme = `#${createHash("sha256").update(sessionId).digest("base64url").slice(0, 16)}`;
    // Every message a session stores takes its lexeme (and every search of it): hashed once per recent session.
    if (sessionLexemes.size >= SESSION_LEXEMES) sessionLexemes.clear();
    sessionLexemes.set(sessionId, lexeme);
  }
  return lexeme;
}

/**
 * The lexeme that scopes a message to its session's owner inside the search index (store/owner.ts ownerHash), beside
 * the session's: an owner's search ANDs it with the match, so the GIN index keeps to the owner's rows however many
 * sessions they have. Longer than a session lexeme, so the two can never be equal.
 */
export function ownerLexeme(owner: string): string {
  return `#o${ownerHash(owner)}`;
}

/**
 * The same lexeme as a `tsvector` the server computes from an owner column or expression `owner` (an empty one for
 * NULL unless `nullable` is false), so a statement that writes a message reads its session's owner itself and no
 * statement is added.
 */
export function ownerTsvectorSql(owner: string, nullable = true): string {
  const hash = ownerHashSql(owner);
  const lexeme = `array_to_tsvector(ARRAY['#o' || ${hash}])`;
  return nullable ? `CASE WHEN ${owner} IS NULL THEN ''::tsvector ELSE ${lexeme} END` : lexeme;
}

/** The owner hash of `owner` (an SQL expression) computed in SQL: the value store/owner.ts ownerHash computes. */
export function ownerHashSql(owner: string): string {
  return `left(encode(sha256(convert_to(${owner}, 'UTF8')), 'hex'), ${OWNER_HASH_CHARS})`;
}

/**
 * A message's search vector `search` (an SQL expression, NULL without searchable text) with the owner lexeme of
 * the session registered as `sessionId` (an SQL expression) added when it has an owner: one key lookup in the
 * registry `sessions` inside the writing statement.
 */
export function ownedSearchSql(search: string, sessions: string, sessionId: string): string {
  return `${search} || COALESCE((SELECT ${ownerTsvectorSql("o.owner")} FROM ${sessions} o WHERE o.id = ${sessionId}), ''::tsvector)`;
}

/**
 * A data-modifying CTE named `owned` for a statement that registers a session: with an owner, the messages the
 * session (`registered`, a CTE with its `id` and `owner`) holds already take the owner lexeme (bounded by that
 * session; idempotent, a vector keeps one copy of a lexeme).
 */
export function ownedMessagesCte(
  t: { messages: string; heads: string; layout: Layout },
  registered: string,
): string {
  if (t.layout.rowsCarrySession) {
    // Citus refuses a STABLE function over a column in an UPDATE: the lexeme is computed first, and the join also
    // names the distribution column, which co-locates it (sql/engines/postgres/layout.ts).
    return `owner_lexeme AS (
      SELECT r.id, ${ownerTsvectorSql("r.owner", false)} AS lexeme FROM ${registered} r WHERE r.owner IS NOT NULL
    ),
    owned AS (
      UPDATE ${t.messages} m SET search = m.search || o.lexeme FROM owner_lexeme o, ${t.heads} h
      WHERE h.session_id = o.id AND m.session_num = h.num AND m.session_id = h.session_id AND m.search IS NOT NULL
    )`;
  }
  return `owned AS (
    UPDATE ${t.messages} m SET search = m.search || ${ownerTsvectorSql("r.owner")} FROM ${registered} r, ${t.heads} h
    WHERE r.owner IS NOT NULL AND h.session_id = r.id AND m.session_num = h.num AND m.search IS NOT NULL
  )`;
}

/** `tsquery` (a literal from this module, or null) kept to `owner`'s rows when given. */
export function withinOwner(tsquery: string | null, owner: string | undefined): string | null {
  if (tsquery === null || tsquery === "" || owner === undefined) return tsquery;
  return `${quoteLexeme(ownerLexeme(owner))} & (${tsquery})`;
}

/**
 * The `tsvector` literal of `text` (plus an optional scope lexeme), or null when it has no searchable word. With
 * `blind` (an encrypted owner's), each word is its blind token, at the word's position.
 */
export function toTsvector(text: string, scope?: string, blind?: BlindTokens): string | null {
  const positions = new Map<string, number[]>();
  let size = 0;
  const tokens = tokenize(text);
  // Folding (NFD + mark stripping) dominates on long texts, and words repeat: fold each distinct token once.
  const folded = new Map<string, string>();
  let words = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    let lexeme = folded.get(token);
    if (lexeme === undefined) {
      lexeme = foldToken(token);
      if (blind !== undefined && lexeme.length > 0) lexeme = blind.word(lexeme);
      folded.set(token, lexeme);
    }
    // A token of marks alone is no word, nor a gap in a phrase (as on every backend).
    if (lexeme.length === 0) continue;
    words++;
    let list = positions.get(lexeme);
    if (!list) {
      const bytes = Buffer.byteLength(lexeme, "utf8");
      if (bytes > MAX_LEXEME_BYTES) continue;
      // Past the size limit new words are left unindexed; the message itself is stored whole.
      if (size + bytes + 8 > MAX_VECTOR_BYTES) continue;
      size += bytes + 8;
      list = [];
      positions.set(lexeme, list);
    }
    const position = Math.min(words, MAX_POSITION);
    if (list.length < MAX_POSITIONS && list[list.length - 1] !== position && size + 2 <= MAX_VECTOR_BYTES) {
      list.push(position);
      size += 2;
    }
  }
  if (positions.size === 0) return null;
  const parts: string[] = scope === undefined ? [] : [quoteLexeme(scope)];
  for (const [lexeme, list] of positions) parts.push(`${quoteLexeme(lexeme)}:${list.join(",")}`);
  return parts.join(" ");
}

function lexemeOf(word: string): string | null {
  const lexeme = foldToken(word);
  // A word the index can never hold cannot match: the whole AND query finds nothing. Nor can a word spelled as a
  // blind token: it would match one by its spelling, not its meaning.
  if (lexeme.length === 0 || Buffer.byteLength(lexeme, "utf8") > MAX_LEXEME_BYTES || isBlindLike(lexeme))
    return null;
  return quoteLexeme(lexeme);
}

// A term as one owner's blind tokens (search/blind-tokens.ts): a phrase its words' tokens in a row, a word its token
// or its family's token prefix (`:*`), and each of its other forms. Only for a term whose clear form can match.
function blindTerm(term: QueryTerm, blind: BlindTokens): string {
  if (term.kind === "phrase")
    return `(${term.words.map((word) => quoteLexeme(blind.word(foldToken(word)))).join(" <-> ")})`;
  const prefix = term.prefix === null ? null : blind.prefix(foldToken(term.prefix));
  const own = prefix === null ? quoteLexeme(blind.word(foldToken(term.word))) : `${quoteLexeme(prefix)}:*`;
  const forms = otherForms(term).map((form) => quoteLexeme(blind.word(form)));
  return forms.length === 0 ? own : `${own} | ${forms.join(" | ")}`;
}

/**
 * The `tsquery` literal of parsed query terms (ANDed, scoped to `scope` when given), or null when nothing can
 * match (no terms, or a term no document can contain). `blinds`: the owners in scope with a key, whose sealed
 * messages hold blind tokens: each term is also matched as each owner's tokens (ORed, as on SQLite).
 */
export function toTsquery(
  terms: readonly QueryTerm[],
  scope?: string,
  blinds: readonly BlindTokens[] = [],
): string | null {
  if (terms.length === 0) return null;
  const parts: string[] = scope === undefined ? [] : [quoteLexeme(scope)];
  for (const term of terms) {
    if (term.kind === "phrase") {
      const words = term.words.map(lexemeOf);
      if (words.some((w) => w === null)) return null;
      parts.push(withBlinds(`(${words.join(" <-> ")})`, term, blinds));
    } else {
      const lexeme = lexemeOf(term.prefix ?? term.word);
      if (lexeme === null) return null;
      const word = term.prefix === null ? lexeme : `${lexeme}:*`;
      // A word's other forms (went for go, dogs for dog), each exactly (lower-case ASCII, as the index holds them).
      const forms = otherForms(term).map(quoteLexeme);
      const clear = forms.length === 0 ? word : `(${[word, ...forms].join(" | ")})`;
      parts.push(withBlinds(clear, term, blinds));
    }
  }
  return parts.join(" & ");
}

// A term's clear tsquery ORed with its blind tokens of each owner in `blinds`.
function withBlinds(clear: string, term: QueryTerm, blinds: readonly BlindTokens[]): string {
  if (blinds.length === 0) return clear;
  return `(${[clear, ...blinds.map((blind) => blindTerm(term, blind))].join(" | ")})`;
}

/**
 * A tsquery matching any of `queries` (each a literal from {@link toTsquery}), within `scope` when given (a
 * session's lexeme, or any of several sessions'): the candidates of ranked recall in one index scan.
 */
export function anyTsquery(queries: readonly string[], scope?: string | readonly string[]): string {
  const any = queries.map((q) => `(${q})`).join(" | ");
  if (scope === undefined) return any;
  const within = typeof scope === "string" ? quoteLexeme(scope) : `(${scope.map(quoteLexeme).join(" | ")})`;
  return `${within} & (${any})`;
}

/**
 * Each term's own tsquery (with `blinds`, as {@link toTsquery}), for a search that tells which terms a row matches;
 * `numbers` are the terms' positions in `terms` (a term no document can contain is left out).
 */
export function termTsqueries(
  terms: readonly QueryTerm[],
  blinds: readonly BlindTokens[] = [],
): { numbers: number[]; queries: string[] } {
  const numbers: number[] = [];
  const queries: string[] = [];
  terms.forEach((term, i) => {
    const tsquery = toTsquery([term], undefined, blinds);
    if (tsquery === null) return;
    numbers.push(i);
    queries.push(tsquery);
  });
  return { numbers, queries };
}
