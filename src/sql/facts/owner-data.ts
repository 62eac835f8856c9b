/**
 * The facts' tables as the owner-data declaration holds them (store/owner-data.ts), on each engine: what they hold,
 * whose they are, how an erasure and the purge reach them and, on Postgres, where Citus places them. The engines'
 * declarations (sql/owner-data/) take them from here, in their place in the list.
 */
import type { OwnerDataTable } from "../../store/owner-data.js";
import type { OwnerDataMakers } from "../room.js";

/** A fact's columns on both engines; an encrypted owner's fact holds the empty marker in `embedding`. */
const FACT_COLUMNS: OwnerDataTable["columns"] = {
  scope: "name",
  id: "id",
  text: "content",
  about: "content",
  producer: "meta",
  status: "meta",
  superseded_by: "id",
};
const FACT_SEALED_AS: NonNullable<OwnerDataTable["sealedAs"]> = { text: "fact", about: "fact" };
const FACT_ERASURE =
  "deleted with any session it names as a source, whatever its scope, and with the last of its source messages (sql/facts/steps.ts)";
const SOURCE_ERASURE = "deleted with its fact or its message";

/** The facts' tables on SQLite (`ftsShadows`: the declaration's FTS5 shadow tables of an index). */
export function sqliteFactTables(
  { plain, withSession }: OwnerDataMakers,
  ftsShadows: (index: string, holds: string) => OwnerDataTable[],
): OwnerDataTable[] {
  return [
    plain(
      "agent_facts",
      "facts learned from conversations (an encrypted owner's sealed: text and subject, store/fact-sealing.ts), and each one's vector on a store with an embedder (none for an encrypted owner's)",
      "session",
      "sealed",
      FACT_ERASURE,
      // A store with an embedder adds `embedding` (sqlite-vectors.ts).
      { ...FACT_COLUMNS, embedding: "derived" },
      FACT_SEALED_AS,
    ),
    plain("agent_fact_sources", "the messages each fact came from", "session", "n/a", SOURCE_ERASURE, {
      session_id: "id",
      message_id: "id",
    }),
    {
      table: "agent_facts_fts",
      holds: "the facts' search index (contentless; an encrypted owner's words as blind tokens)",
      tie: "message",
      citus: "none",
      sealed: "sealed",
      erasure: "a fact's terms deleted with it (a tombstone until a merge)",
      purge: "fts-merge",
      columns: { text: "derived" },
    },
    ...ftsShadows("agent_facts_fts", "the facts' search index"),
    plain(
      "agent_learn_marks",
      "how far a session was learned from, and its learner",
      "session",
      "n/a",
      withSession,
      {
        session_id: "id",
        holder: "meta",
      },
    ),
  ];
}

/** The facts' tables on Postgres: by scope key on a Citus cluster (an owner's facts on one node), marks by session. */
export function postgresFactTables(withSession: string): OwnerDataTable[] {
  return [
    {
      table: "agent_facts",
      holds:
        "facts learned from conversations and their search vectors (an encrypted owner's sealed, its vector blind tokens), and each one's embedding on a store with an embedder (none for an encrypted owner's)",
      tie: "session",
      // By scope key (o:<owner> or s:<session>): one owner's or one session's facts on one node (docs/FACTS.md).
      citus: "by-key",
      citusColumn: "scope",
      sealed: "sealed",
      sealedAs: FACT_SEALED_AS,
      erasure: FACT_ERASURE,
      purge: "rewrite",
      // A store with an embedder adds `embedding` (postgres-vectors.ts).
      columns: { ...FACT_COLUMNS, search: "derived", embedding: "derived" },
    },
    {
      table: "agent_fact_sources",
      holds: "the messages each fact came from",
      tie: "session",
      citus: "by-key",
      citusColumn: "scope",
      citusColocate: "agent_facts",
      sealed: "n/a",
      erasure: SOURCE_ERASURE,
      purge: "rewrite",
      columns: { scope: "name", session_id: "id", message_id: "id" },
    },
    {
      table: "agent_learn_marks",
      holds: "how far a session was learned from, and its learner",
      tie: "session",
      citus: "by-session",
      sealed: "n/a",
      erasure: withSession,
      purge: "rewrite",
      columns: { session_id: "id", holder: "meta" },
    },
  ];
}
