/** SQLite's statements of facts (steps.ts has the steps); lists of values travel as JSON (json_each). */
import { factIndexText } from "../../search/fact-index.js";
import { ownerGuardParams } from "../../store/crypto/write-guard.js";
import { factWrite, storedFactText } from "../../store/fact-sealing.js";
import type { FactFilter } from "../../store/facts.js";
import { ownerGuardSqlite } from "../engines/sqlite/owner-guard.js";
import { call } from "../engines/sqlite/program.js";
import { command, query } from "../program.js";
import type { FactRekeyStatement, RekeyTable } from "../rekey/table.js";
import type { FactStatements } from "./steps.js";

/** A fact row's columns as the steps read them (`sealed_chars` non-null: its text is sealed). */
export const FACT_COLUMNS =
  "seq, scope, id, text, about, observed_at, producer, status, superseded_by, created_at, sealed_chars";
const IN = "(SELECT value FROM json_each(?))";
const json = (values: readonly unknown[]) => JSON.stringify(values);

/**
 * The source filter of a read (`sourcesIn`, `sourceSession`) over the fact row `alias`, with its parameters: a fact
 * passes when one of its sources (read by the primary key) lies in the session and among the ids. The ids are one
 * JSON parameter, made a lookup table once per statement (an active path's 5,000 ids: docs/FACTS.md#recall).
 */
export function sourcedSql(
  alias: string,
  filter: Pick<FactFilter, "sourcesIn" | "sourceSession">,
): { sql: string; params: string[] } {
  const { sourcesIn, sourceSession } = filter;
  if (sourcesIn === undefined && sourceSession === undefined) return { sql: "", params: [] };
  return {
    // The unary plus keeps the planner off the (session_id, message_id) index: probing it once per id for every
    // fact read cost an active search of a 5,000-message path 0.6 s.
    sql: ` AND EXISTS (SELECT 1 FROM agent_fact_sources s WHERE s.fact_seq = ${alias}.seq${
      sourceSession === undefined ? "" : " AND +s.session_id = ?"
    }${sourcesIn === undefined ? "" : ` AND +s.message_id IN ${IN}`})`,
    params: [
      ...(sourceSession === undefined ? [] : [sourceSession]),
      ...(sourcesIn === undefined ? [] : [json(sourcesIn)]),
    ],
  };
}

/** The statement table of facts on SQLite. */
export const sqliteFacts: FactStatements = {
  owned: (owner, ids) =>
    query(`SELECT id FROM agent_sessions WHERE owner = ? AND id IN ${IN}`, [owner, json(ids)]),
  taken: (scope, ids) =>
    query(`SELECT id FROM agent_facts WHERE scope = ? AND id IN ${IN}`, [scope, json(ids)]),
  // Read in the write's transaction, which holds the write lock from here on (BEGIN IMMEDIATE).
  writeKey: (scope, where) => call((driver) => [{ write: factWrite(driver.keys, scope, where) }]),
  insert: (scope, f, now, write, state) => {
    const stored = storedFactText(write.key, scope, f.id, f);
    return query(
      `INSERT INTO agent_facts (scope, id, text, about, observed_at, producer, status, superseded_by, created_at,
         sealed_chars)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${ownerGuardSqlite} RETURNING seq`,
      [
        scope,
        f.id,
        stored.text,
        stored.about,
        f.observedAt,
        f.producer,
        state?.status ?? "current",
        state?.supersededBy ?? null,
        now,
        stored.sealedChars,
        ...ownerGuardParams(write.guard),
      ],
    );
  },
  index: (seq, f, key) =>
    command("INSERT INTO agent_facts_fts (rowid, text) VALUES (?, ?)", [seq, factIndexText(key, f)]),
  sources: (_scope, seq, sources) =>
    command(
      `INSERT INTO agent_fact_sources (fact_seq, idx, session_id, message_id)
       SELECT ?, key, json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)`,
      [seq, json(sources.map((s) => [s.sessionId, s.messageId]))],
    ),
  byId: (scope, id) =>
    query(`SELECT ${FACT_COLUMNS} FROM agent_facts WHERE scope = ? AND id = ?`, [scope, id]),
  status: (scope, id, status, by) =>
    query(
      `UPDATE agent_facts SET status = ?, superseded_by = ? WHERE scope = ? AND id = ? AND status = 'current'
       RETURNING seq`,
      [status, by, scope, id],
    ),
  page: (scope, filter, before, limit) => {
    const sourced = sourcedSql("f", filter);
    return query(
      `SELECT ${FACT_COLUMNS} FROM agent_facts f WHERE scope = ? AND seq < ? AND status IN ${IN}${sourced.sql}
       ORDER BY seq DESC LIMIT ?`,
      [scope, before ?? Number.MAX_SAFE_INTEGER, json(filter.status), ...sourced.params, limit],
    );
  },
  // By the primary key, one seek per seq; the scope is checked on the row (the (scope, seq) index took two seeks).
  bySeqs: (scope, seqs) =>
    query(`SELECT ${FACT_COLUMNS} FROM agent_facts WHERE +scope = ? AND seq IN ${IN}`, [scope, json(seqs)]),
  sourcesOf: (_scope, seqs) =>
    query(
      `SELECT fact_seq, session_id, message_id FROM agent_fact_sources WHERE fact_seq IN ${IN}
       ORDER BY fact_seq, idx`,
      [json(seqs)],
    ),
  any: () => query("SELECT 1 AS one FROM agent_facts LIMIT 1"),
  all: (after, limit) =>
    query(`SELECT ${FACT_COLUMNS} FROM agent_facts WHERE (scope, seq) > (?, ?) ORDER BY scope, seq LIMIT ?`, [
      after?.scope ?? "",
      after?.seq ?? -1,
      limit,
    ]),
  // By the (session_num, id) index of messages; no lock: a write transaction (BEGIN IMMEDIATE) holds the file.
  stored: (sessionId, ids) =>
    query(
      `SELECT m.id FROM agent_messages m WHERE m.session_num = (
         SELECT num FROM agent_session_heads WHERE session_id = ?) AND m.id IN ${IN}`,
      [sessionId, json(ids)],
    ),
  sourceSessions: (after, limit) =>
    query(
      `SELECT DISTINCT session_id FROM agent_fact_sources WHERE session_id > ? ORDER BY session_id LIMIT ?`,
      [after ?? "", limit],
    ),
  sourceMessages: (sessionId) =>
    query("SELECT DISTINCT message_id FROM agent_fact_sources WHERE session_id = ?", [sessionId]),
  mark: (sessionId) =>
    query("SELECT through, holder, lease_until, failures FROM agent_learn_marks WHERE session_id = ?", [
      sessionId,
    ]),
  claim: (sessionId, holder, now, until) =>
    query(
      `INSERT INTO agent_learn_marks (session_id, through, holder, lease_until, failures) VALUES (?, 0, ?, ?, 0)
       ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
       WHERE agent_learn_marks.holder IS NULL OR agent_learn_marks.holder = excluded.holder
         OR agent_learn_marks.lease_until <= ?
       RETURNING through, holder, lease_until, failures`,
      [sessionId, holder, until, now],
    ),
  advance: (sessionId, holder, through, failures) =>
    query(
      `UPDATE agent_learn_marks SET through = ?, failures = ? WHERE session_id = ? AND holder = ?
       RETURNING 1 AS moved`,
      [through, failures, sessionId, holder],
    ),
  release: (sessionId, holder) =>
    command(
      "UPDATE agent_learn_marks SET holder = NULL, lease_until = 0 WHERE session_id = ? AND holder = ?",
      [sessionId, holder],
    ),
  sessionFacts: (sessionId) =>
    query(
      `SELECT DISTINCT f.seq, f.scope, f.id, f.status, f.superseded_by FROM agent_fact_sources s
       JOIN agent_facts f ON f.seq = s.fact_seq
       WHERE s.session_id = ?`,
      [sessionId],
    ),
  messageFacts: (sessionId, ids) => {
    const among = ids ? ` AND message_id IN ${IN}` : "";
    const list = ids ? [json(ids)] : [];
    return query(
      `SELECT f.seq, f.scope, f.id, f.status, f.superseded_by, (SELECT count(*) FROM agent_fact_sources o
         WHERE o.fact_seq = f.seq
         AND NOT (o.session_id = ?${among})) AS kept
       FROM agent_facts f WHERE f.seq IN (SELECT fact_seq FROM agent_fact_sources WHERE session_id = ?${among})`,
      [sessionId, ...list, sessionId, ...list],
    );
  },
  dropSources: (sessionId, ids) =>
    command(
      `DELETE FROM agent_fact_sources WHERE session_id = ?${ids ? ` AND message_id IN ${IN}` : ""}`,
      ids ? [sessionId, json(ids)] : [sessionId],
    ),
  drop: (_scopes, seqs) => [
    command(`DELETE FROM agent_facts_fts WHERE rowid IN ${IN}`, [json(seqs)]),
    command(`DELETE FROM agent_fact_sources WHERE fact_seq IN ${IN}`, [json(seqs)]),
    command(`DELETE FROM agent_facts WHERE seq IN ${IN}`, [json(seqs)]),
  ],
  // By the index of what superseded each fact: the facts the dropped ones had superseded.
  restore: (scopes, ids) =>
    command(
      `UPDATE agent_facts SET status = 'current', superseded_by = NULL WHERE seq IN (
         SELECT f.seq FROM json_each(?) j JOIN agent_facts f
           ON f.scope = json_extract(j.value, '$[0]') AND f.superseded_by = json_extract(j.value, '$[1]')
         WHERE f.status = 'superseded')`,
      [json(scopes.map((scope, i) => [scope, ids[i]]))],
    ),
  relink: (scopes, ids, successors) =>
    command(
      `UPDATE agent_facts SET superseded_by = (
         SELECT json_extract(j.value, '$[2]') FROM json_each(?) j
         WHERE json_extract(j.value, '$[0]') = agent_facts.scope AND json_extract(j.value, '$[1]') = agent_facts.superseded_by)
       WHERE seq IN (
         SELECT f.seq FROM json_each(?) j JOIN agent_facts f
           ON f.scope = json_extract(j.value, '$[0]') AND f.superseded_by = json_extract(j.value, '$[1]')
         WHERE f.status = 'superseded')`,
      // The same list twice: once for the new value, once to find the rows (every driver takes plain `?` only).
      Array(2).fill(json(scopes.map((scope, i) => [scope, ids[i], successors[i]]))),
    ),
  dropMark: (sessionId) => command("DELETE FROM agent_learn_marks WHERE session_id = ?", [sessionId]),
};

/** The scopes of an owner's facts and its sessions' own, as one JSON array. */
const ownedScopes = (owner: string, ids: string[]) =>
  JSON.stringify([`o:${owner}`, ...ids.map((id) => `s:${id}`)]);

/**
 * A key rotation's statements of facts: facts sealed under a key, re-sealed (sql/rekey/finish.ts), and an owner's
 * facts in clear sealed, their vectors dropped (sql/rekey/clear.ts).
 */
export const sqliteFactRekey: Pick<RekeyTable, FactRekeyStatement> = {
  clearFacts: (owner, ids) =>
    query(
      `SELECT seq, scope, id, text, about FROM agent_facts WHERE sealed_chars IS NULL
       AND scope IN (SELECT value FROM json_each(?))`,
      [ownedScopes(owner, ids)],
    ),
  factVectorsPresent: () =>
    query("SELECT 1 AS present FROM pragma_table_info('agent_facts') WHERE name = 'embedding'"),
  dropFactVectors: (owner, ids) =>
    command(
      `UPDATE agent_facts SET embedding = X'' WHERE embedding IS NOT NULL AND scope IN (SELECT value FROM json_each(?))`,
      [ownedScopes(owner, ids)],
    ),
  factsUnder: (start) =>
    query(
      `SELECT seq, scope, id, text FROM agent_facts WHERE sealed_chars IS NOT NULL AND substr(text, 1, ?) = ?`,
      [start.length, start],
    ),
  // The FTS row follows the text: the fact's words as the new key's blind tokens.
  writeFact: (row, key, words) => {
    const stored = storedFactText(key, row.scope, row.id, words);
    return [
      command("UPDATE agent_facts SET text = ?, about = ?, sealed_chars = ? WHERE seq = ?", [
        stored.text,
        stored.about,
        stored.sealedChars,
        row.seq,
      ]),
      command("DELETE FROM agent_facts_fts WHERE rowid = ?", [row.seq]),
      command("INSERT INTO agent_facts_fts (rowid, text) VALUES (?, ?)", [
        row.seq,
        factIndexText(key, words),
      ]),
    ];
  },
};
