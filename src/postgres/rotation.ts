/** A Postgres key rotation under way as its batches see it (rekey.ts and the rows it re-seals after the messages). */
import type { BlindTokens } from "../search/blind-tokens.js";
import type { Tables } from "./schema.js";

/** A started rotation as its batches see it. */
export interface Rotation {
  t: Tables;
  owner: string;
  ownerHash: string;
  key: Uint8Array;
  id: string;
  /** The new key's blind tokens, which a re-sealed row's search vector is made of. */
  blind: BlindTokens;
}
