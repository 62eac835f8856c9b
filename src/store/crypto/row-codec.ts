/**
 * The row codec (docs/PRIVACY.md, "Encryption at rest"): the one place a column's value is sealed for an owner with
 * a key and opened again. Each sealed *kind* of column (a message's content, an overlay's summary, a block, an
 * entry, a stream chunk, a fact, a session's name) has its rule here: the label its associated data carries (so a
 * value of one kind never opens as another), the ids it is bound to (so a value copied to another row does not
 * open), whether the text is wrapped in JSON inside, and how its clear form is escaped so it is never read as
 * sealed. A storage room (src/sql/room.ts) declares its own kinds with {@link roomKind} in its folder, so a new
 * concern with sealed rows adds no line here; the codec gives each the same guarantees (a scope of its own, which
 * no session id can be). The owner-data declarations name each sealed column's kind (`sealedAs`,
 * store/owner-data.ts), and only this module and the rotation's code call seal.ts's sealContent/openContent
 * (test/structure/sealing.test.ts). The stored forms are the ones each kind had before the codec: rows sealed then
 * still open.
 */
import { SessionError } from "../../errors.js";
import { isSealed, keyId, openContent, type SealedKind, sealContent, sealedKeyId } from "./seal.js";

/** Every kind of sealed column of the session store (rooms declare theirs, {@link roomKind}). */
export const CODEC_KINDS = ["message", "overlay", "stream", "block", "entry", "fact", "name"] as const;

/** A kind of sealed column of the session store (see the module comment). */
export type CodecKind = (typeof CODEC_KINDS)[number];

declare const ROOM_KIND: unique symbol;

/** A room's kind's name, as its owner-data declaration names it (`sealedAs`): only {@link roomKind} makes one. */
export type RoomKindName = string & { readonly [ROOM_KIND]: true };

/** The ids a value of each kind is bound to. */
export interface CodecBindings {
  /** `id` absent: a read that does not know it takes the one the sealed value names (still bound to the session). */
  message: { sessionId: string; id?: string | undefined };
  overlay: { sessionId: string; id?: string | undefined };
  stream: { sessionId: string; streamId: string; seq: number };
  block: { key: string };
  entry: { label: string; key: string };
  fact: { scope: string; id: string };
  name: { sessionId: string };
}

/** What the codec asks of a store's keys (ContentKeys answers it): whose a session is, and an owner's keys. */
export interface CodecKeys {
  /** False for a store opened without a keyring. */
  readonly keyed: boolean;
  /** The owner the session is registered with, or null. */
  ownerOf(sessionId: string): string | null;
  /** The owner's keys that open its sealed values: the current one, then the previous ones. */
  openingKeysOf(owner: string): Uint8Array[];
}

interface Rule<B> {
  /** The label (seal.ts) in the associated data. */
  label: SealedKind;
  /** The associated data's first id: a session's, or a scope no session id can be (it holds U+0000). */
  scope(b: B): string;
  /** Its second id (written after the sealed body too); undefined: the one the value names. */
  id(b: B): string | undefined;
  /** The session whose owner's keys open it (the owner is the caller's to give otherwise). */
  session?(b: B): string;
  /** The text is sealed as its JSON, so any string reads back exactly. */
  json: boolean;
  /** A clear value starting `~` is stored with it doubled, so it never reads as sealed (`~sealed…`). */
  tilde: boolean;
  /** The row, for a refusal. */
  what(b: B): string;
}

/** What a room says of a kind of its own (see {@link roomKind}); `B`: the ids a value is bound to. */
export interface RoomKindRule<B> {
  /**
   * Its scope's prefix: one lowercase word and a colon, which no other kind has (test/privacy/owner-data.test.ts
   * holds the rooms' apart). The codec puts U+0000 before it, which no session id holds, so a value of it never
   * opens as a message, nor one of another kind as it.
   */
  prefix: string;
  /** The rest of the scope, after the prefix (a session id, a namespace). */
  scope(b: B): string;
  /** The row's id within its scope. */
  id(b: B): string;
  /** The session whose owner's keys open it; absent: the caller names the owner. */
  session?(b: B): string;
  /** The row, for a refusal. */
  what(b: B): string;
}

/** A kind of sealed column a storage room declares (src/sql/room.ts `sealed`), made by {@link roomKind}. */
export interface RoomKind<B> {
  readonly name: RoomKindName;
  /** Its scope's prefix, U+0000 before it. */
  readonly prefix: string;
  readonly rule: Rule<B>;
}

/**
 * A room's own kind of sealed column: its values sealed as text, bound to the scope and id the room gives. Not
 * JSON-wrapped and not tilde-escaped, so a room's sealed column carries a flag saying which rows are sealed (the
 * checkpoints'), or holds text that never starts with `~` (the graph items' JSON): else a clear value could read as
 * sealed.
 */
export function roomKind<B>(name: string, rule: RoomKindRule<B>): RoomKind<B> {
  // One word and a colon: no room's prefix then starts another's, and none is the facts' (their scopes would meet).
  if (
    !/^[a-z][a-z0-9-]*:$/.test(rule.prefix) ||
    rule.prefix === "fact:" ||
    (CODEC_KINDS as readonly string[]).includes(name)
  ) {
    // A declaration's mistake, not input: thrown when the room's module loads (as owner-data.ts's are).
    throw new Error(
      `A room's sealed kind "${name}" needs a name of its own and a prefix of one lowercase word and a colon, not the facts' (got "${rule.prefix}")`,
    );
  }
  const prefix = `\u0000${rule.prefix}`;
  return {
    name: name as RoomKindName,
    prefix,
    rule: {
      label: "message",
      scope: (b) => prefix + rule.scope(b),
      id: rule.id,
      ...(rule.session ? { session: rule.session } : {}),
      json: false,
      tilde: false,
      what: rule.what,
    },
  };
}

// No session id holds U+0000: a block, entry or fact never opens as a message, nor one of them as another.
const FACT_SCOPE = "\u0000fact:";

const RULES: { [K in CodecKind]: Rule<CodecBindings[K]> } = {
  message: {
    label: "message",
    scope: (b) => b.sessionId,
    id: (b) => b.id,
    session: (b) => b.sessionId,
    json: false,
    tilde: false,
    what: (b) => `a message of session "${b.sessionId}"`,
  },
  overlay: {
    // Its clear form is the engine's free text (a flag column, src/sql/engines/sqlite/ and postgres/), not escaped here.
    label: "overlay",
    scope: (b) => b.sessionId,
    id: (b) => b.id,
    session: (b) => b.sessionId,
    json: false,
    tilde: false,
    what: (b) => `an overlay summary of session "${b.sessionId}"`,
  },
  stream: {
    label: "stream",
    scope: (b) => b.sessionId,
    // Its place first (a number: no colon), so no other stream id and place agree.
    id: (b) => `${b.seq}:${b.streamId}`,
    session: (b) => b.sessionId,
    json: false,
    tilde: true,
    what: (b) => `a stream chunk of session "${b.sessionId}"`,
  },
  block: {
    label: "message",
    scope: () => "\u0000block",
    id: (b) => b.key,
    json: true,
    tilde: false,
    what: (b) => `Block "${b.key}"`,
  },
  entry: {
    label: "message",
    scope: () => "\u0000entry",
    id: (b) => JSON.stringify([b.label, b.key]),
    json: true,
    tilde: false,
    what: (b) => `Entry "${b.key}" of "${b.label}"`,
  },
  fact: {
    label: "message",
    scope: (b) => FACT_SCOPE + b.scope,
    id: (b) => b.id,
    json: false,
    tilde: false,
    what: (b) => `Fact "${b.id}" of scope "${b.scope}"`,
  },
  name: {
    label: "name",
    scope: (b) => b.sessionId,
    id: () => "",
    session: (b) => b.sessionId,
    json: false,
    tilde: true,
    what: (b) => `the name of session "${b.sessionId}"`,
  },
};

/** A kind of sealed column: the session store's, by its name, or a room's. */
export type AnyKind = CodecKind | RoomKind<never>;

/** The ids a value of kind `T` is bound to. */
export type BindingOf<T extends AnyKind> = T extends CodecKind
  ? CodecBindings[T]
  : T extends RoomKind<infer B>
    ? B
    : never;

// The rule of a kind (a room's travels with it).
const ruleOf = <T extends AnyKind>(kind: T): Rule<BindingOf<T>> =>
  (typeof kind === "string" ? RULES[kind as CodecKind] : (kind as RoomKind<never>).rule) as Rule<
    BindingOf<T>
  >;

const nameOf = (kind: AnyKind): string => (typeof kind === "string" ? kind : kind.name);

/** The stored form of `value`: sealed under `key`, or its clear form (key null). */
export function encode<T extends AnyKind>(
  kind: T,
  key: Uint8Array | null,
  binding: BindingOf<T>,
  value: string,
): string {
  const rule = ruleOf(kind);
  if (key === null) return rule.tilde && value.startsWith("~") ? `~${value}` : value;
  const id = rule.id(binding);
  if (id === undefined)
    throw new SessionError("STORAGE", `A ${nameOf(kind)} was to be sealed without its id`);
  return sealContent(key, rule.scope(binding), id, rule.json ? JSON.stringify(value) : value, rule.label);
}

/** True when a stored value of `kind` is sealed (not its clear form). */
export function isSealedValue(kind: AnyKind, stored: string): boolean {
  if (ruleOf(kind).tilde && stored.startsWith("~~")) return false;
  return isSealed(stored);
}

/**
 * The value a stored one holds: its clear form unescaped, or opened with the owner's key it names (current or
 * previous; a value sealed before key ids, with whichever opens it). `owner`: whose keys open it, for a kind not
 * bound to a session (undefined for one that is: its session's owner). `DECRYPT_FAILED` without `keys` (a store
 * without its codec keys), without a key for the owner, with a wrong key, or for a value changed or moved to
 * another row.
 */
export function decode<T extends AnyKind>(
  kind: T,
  keys: CodecKeys | undefined,
  owner: string | null | undefined,
  binding: BindingOf<T>,
  stored: string,
): string {
  const rule = ruleOf(kind);
  if (rule.tilde && stored.startsWith("~~")) return stored.slice(1);
  if (!isSealed(stored)) return stored;
  // The row's description is built only for a refusal (reads of sealed rows are hot).
  const what = () => rule.what(binding);
  if (!keys)
    throw new SessionError("DECRYPT_FAILED", `${capital(what())} is encrypted and the store has no keyring`);
  const whose = owner !== undefined ? owner : rule.session ? keys.ownerOf(rule.session(binding)) : null;
  const candidates = whose === null ? [] : keys.openingKeysOf(whose);
  if (candidates.length === 0) throw noKey(keys, whose, what());
  const named = sealedKeyId(stored);
  if (named !== null) {
    const key = candidates.find((candidate) => keyId(candidate) === named);
    if (!key) {
      throw new SessionError(
        "DECRYPT_FAILED",
        `${capital(what())} is sealed under key ${named}, which is neither the current nor a previous key the keyring answers for owner "${whose}"`,
      );
    }
    return decodeWith(kind, key, binding, stored);
  }
  for (let i = 0; ; i++) {
    try {
      return decodeWith(kind, candidates[i]!, binding, stored);
    } catch (error) {
      // The last key's refusal is the answer; an earlier one only means another key sealed it.
      if (i === candidates.length - 1) throw error;
    }
  }
}

/**
 * True when `keys` answer the key of `owner` that a sealed value names (one sealed before key ids: any key of the
 * owner): {@link decode} then opens it or finds it changed or moved, rather than lacking the key.
 */
export function hasNamedKey(keys: CodecKeys | undefined, owner: string | null, stored: string): boolean {
  if (!keys || owner === null) return false;
  const candidates = keys.openingKeysOf(owner);
  const named = sealedKeyId(stored);
  return named === null ? candidates.length > 0 : candidates.some((key) => keyId(key) === named);
}

/** {@link decode} of a sealed value with the key that sealed it (a rotation knows it). */
export function decodeWith<T extends AnyKind>(
  kind: T,
  key: Uint8Array,
  binding: BindingOf<T>,
  stored: string,
): string {
  const rule = ruleOf(kind);
  let text: string;
  try {
    text = openContent(key, rule.scope(binding), stored, rule.id(binding), rule.label);
  } catch (cause) {
    // A session's kinds say which row (seal.ts names it); the others name theirs here.
    if (rule.session) throw cause;
    throw new SessionError(
      "DECRYPT_FAILED",
      `${rule.what(binding)} does not open with its owner's key (changed or moved)`,
      { cause },
    );
  }
  return rule.json ? (JSON.parse(text) as string) : text;
}

// No key opens the owner's values: a store without a keyring says to open it with one.
function noKey(keys: CodecKeys, owner: string | null, what: string): SessionError {
  if (owner === null) {
    return new SessionError(
      "DECRYPT_FAILED",
      `${capital(what)} is encrypted and belongs to no owner with a key`,
    );
  }
  return new SessionError(
    "DECRYPT_FAILED",
    keys.keyed
      ? `Owner "${owner}" has encrypted content but the keyring has no key for it (${what})`
      : `Owner "${owner}" has encrypted content (${what}): open the store with its keyring`,
  );
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
