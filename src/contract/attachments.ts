// Optional store capability: the content-addressed payloads offloaded from messages.
import type { SessionStore } from "./store.js";

/** Totals of a store's attachment store: distinct payloads and their bytes (each counted once). */
export interface AttachmentStats {
  count: number;
  bytes: number;
}

/**
 * The content-addressed payloads a store offloaded from messages (see docs/STORAGE.md, "Attachments"):
 * each distinct payload is stored once under its SHA-256 and deleted with the last message row pointing at it.
 */
export interface AttachmentStore {
  /** Number and total bytes of the stored payloads. */
  stats(): Promise<AttachmentStats>;
  /** The bytes stored under a SHA-256 (hex), or null when no row points at such a payload. */
  get(hash: string): Promise<Uint8Array | null>;
}

/** A store that offloads media payloads into an {@link AttachmentStore} (memory, SQLite and Postgres). */
export interface AttachmentCapableStore extends SessionStore {
  readonly attachments: AttachmentStore;
}

/** True when the store has an {@link AttachmentStore}. */
export function hasAttachmentStore(store: SessionStore): store is AttachmentCapableStore {
  const attachments = (store as Partial<AttachmentCapableStore>).attachments;
  return typeof attachments === "object" && attachments !== null && typeof attachments.stats === "function";
}
