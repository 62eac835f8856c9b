/**
 * Which field of the export format (the CLI's JSONL lines, cli/transfer/format.ts, over the transfer stream of
 * contract/transfer.ts) carries each content and name column of the owner-data declarations (store/owner-data.ts),
 * or why the format leaves it out. test/privacy/transfer-fields.test.ts fails when a declared content or name column
 * is neither carried nor left out with a reason, and when a carried field is not in a real export.
 */

/** How a column travels: in a field (`<line type>.<field path>`), or left out for a reason. */
export type TransferField = { carried: string } | { left: string };

const TRANSIENT_STREAM =
  "a running answer is transient (kept until it ends or expires); an export moves stored conversations, not answers in flight";

/**
 * By `<table>.<column>`, for both backends' declarations (the tables they share have the same columns); a storage
 * room's tables are its own (src/sql/room.ts `transferFields`).
 */
export const TRANSFER_FIELDS: Readonly<Record<string, TransferField>> = {
  "agent_messages.content": { carried: "message.message" },
  "agent_message_chunks.data": { carried: "message.message" },
  "agent_compactions.summary": { carried: "compaction.summary" },
  "agent_compactions.details": { carried: "compaction.details" },
  "agent_attachments.data": { carried: "attachment.data" },
  "agent_context_blocks.key": { carried: "block.key" },
  "agent_context_blocks.content": { carried: "block.content" },
  "agent_context_blocks.owner": { carried: "block.owner" },
  "agent_search_entries.label": { carried: "entry.label" },
  "agent_search_entries.key": { carried: "entry.key" },
  "agent_search_entries.content": { carried: "entry.content" },
  "agent_search_entries.owner": { carried: "entry.owner" },
  "agent_sessions.name": { carried: "session.registry.name" },
  "agent_sessions.owner": { carried: "session.registry.owner" },
  "agent_streams.error": { left: TRANSIENT_STREAM },
  "agent_stream_chunks.chunk": { left: TRANSIENT_STREAM },
  "agent_changes.data": {
    left: "the change log is this store's feed to its subscribers; the importing store logs its own events as it writes",
  },
  // A fact's scope travels as its owner (or its session, for a session's own fact), its sources' scope with it.
  "agent_facts.scope": { carried: "fact.owner" },
  "agent_facts.text": { carried: "fact.text" },
  "agent_facts.about": { carried: "fact.about" },
  "agent_fact_sources.scope": { carried: "fact.owner" },
  "sqlite_stat4.sample": { left: "the database's statistics, sampled again by its next ANALYZE" },
};
