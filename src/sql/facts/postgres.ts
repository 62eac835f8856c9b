/** Postgres's statements of facts (steps.ts has the steps): lists of values travel as arrays. */
import { factBlind } from "../../search/fact-index.js";
import type { ContentKeys } from "../../store/crypto/content-keys.js";
import { factWrite, storedFactText } from "../../store/fact-sealing.js";
import { factSearchText } from "../../store/facts.js";
import type { Query } from "../engines/postgres/client.js";
import { toTsvector } from "../engines/postgres/fts.js";
import { ownerRowGuard, ownerRowGuardParams } from "../engines/postgres/owner-guard.js";
import { call } from "../engines/postgres/program.js";
import { quote, statement, type Tables } from "../engines/postgres/tables.js";
import { command, query } from "../program.js";
import type { FactRekeyStatement, RekeyTable } from "../rekey/table.js";
import type { FactStatements } from "./steps.js";

/**
 * What a fact write needs of the store's keys (sql/sealing/postgres.ts PostgresKeys, handed in with the tables): the
 * owner's key looked up in the write's transaction, with the check its insert's guard then requires.
 */
export interface FactKeys {
  guarded<T>(query: Query, use: (keys: ContentKeys) => T, fresh?: boolean): Promise<{ value: T }>;
}

/** The tables a fact statement names, with the store's keys when it has a keyring. */
export type FactTables = Tables & { readonly keys?: FactKeys | undefined };

/** A fact row's columns as the steps read them (`sealed_chars` non-null: its text is sealed). */
export const FACT_COLUMNS =
  "seq, scope, id, text, about, observed_at, producer, status, superseded_by, created_at, sealed_chars";

/** The fact tables' names. */
export function factTables(t: Tables): { facts: string; sources: string; marks: string } {
  const name = (table: string) => `${t.schema ? `${quote(t.schema)}.` : ""}${quote(t.prefix + table)}`;
  return {
    facts: name("agent_facts"),
    sources: name("agent_fact_sources"),
    marks: name("agent_learn_marks"),
  };
}

/**
 * The source filter of a read over the fact row `f` of scope `scope` (a parameter; `ids`: the parameter of
 * `sourcesIn`, `session`: of `sourceSession`, each NULL for none): a fact passes when one of its sources (read by the
 * primary key) lies in the session and among the ids. The ids are a hashed subplan, built once per statement, not an
 * array scanned per source (an active path's 5,000 ids: docs/FACTS.md#recall). The sources are matched to the scope
 * parameter, not to `f.scope`: on Citus a correlated filter under the OR would not route the subquery to the
 * scope's shard, and the read would go to every shard (docs/FACTS.md#citus).
 */
export function sourcedSql(sources: string, scope: string, ids: string, session: string): string {
  return `(${ids}::text[] IS NULL AND ${session}::text IS NULL OR EXISTS (SELECT 1 FROM ${sources} s
    WHERE s.scope = ${scope} AND s.fact_seq = f.seq AND (${session}::text IS NULL OR s.session_id = ${session}::text)
      AND (${ids}::text[] IS NULL OR s.message_id IN (SELECT unnest(${ids}::text[])))))`;
}

const pageSql = statement(
  (
    t,
  ) => `SELECT ${FACT_COLUMNS} FROM ${factTables(t).facts} f WHERE scope = $1 AND seq < $2 AND status = ANY($3::text[])
    AND ${sourcedSql(factTables(t).sources, "$1", "$4", "$6")} ORDER BY seq DESC LIMIT $5`,
);
const claimSql = statement(
  (t) => `INSERT INTO ${factTables(t).marks} AS m (session_id, through, holder, lease_until, failures)
    VALUES ($1, 0, $2, $3, 0)
    ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
    WHERE m.holder IS NULL OR m.holder = EXCLUDED.holder OR m.lease_until <= $4
    RETURNING through, holder, lease_until, failures`,
);
// By the index of what superseded each fact: the facts the dropped ones had superseded.
const restoreSql = statement(
  (t) => `UPDATE ${factTables(t).facts} f SET status = 'current', superseded_by = NULL
    FROM unnest($1::text[], $2::text[]) AS g(scope, id)
    WHERE f.scope = g.scope AND f.superseded_by = g.id AND f.status = 'superseded'`,
);
// The same facts, re-linked to the next fact of the removed one's chain that stays.
const relinkSql = statement(
  (t) => `UPDATE ${factTables(t).facts} f SET superseded_by = g.next
    FROM unnest($1::text[], $2::text[], $3::text[]) AS g(scope, id, next)
    WHERE f.scope = g.scope AND f.superseded_by = g.id AND f.status = 'superseded'`,
);

/** The statement table of facts on Postgres. */
export function postgresFacts(t: FactTables): FactStatements {
  const { facts, sources, marks } = factTables(t);
  return {
    owned: (owner, ids) =>
      query(`SELECT id FROM ${t.sessions} WHERE owner = $1 AND id = ANY($2::text[])`, [owner, ids]),
    taken: (scope, ids) =>
      query(`SELECT id FROM ${facts} WHERE scope = $1 AND id = ANY($2::text[])`, [scope, ids]),
    // Read in the write's transaction; the insert's guard refuses it if the owner's key changed since.
    writeKey: (scope, where, fresh) =>
      call(async (q) => {
        if (!t.keys) return [{ write: factWrite(undefined, scope, where) }];
        const { value } = await t.keys.guarded(q, (k) => factWrite(k, scope, where), fresh);
        return [{ write: value }];
      }),
    insert: (scope, f, now, write, state) => {
      // Sealed under the owner's key, its vector of the key's blind tokens in its words' positions.
      const key = write.key;
      const stored = storedFactText(key, scope, f.id, f);
      const guard = ownerRowGuard(t, 12);
      return query(
        `WITH ${guard.ctes}w AS (SELECT 1) INSERT INTO ${facts} (scope, id, text, about, observed_at, producer, status,
           superseded_by, created_at, search, sealed_chars)
         SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::text, $9::text, $10::text, $7::bigint,
           $8::tsvector, $11::integer FROM w WHERE true${guard.and} RETURNING seq`,
        [
          scope,
          f.id,
          stored.text,
          stored.about,
          f.observedAt,
          f.producer,
          now,
          toTsvector(factSearchText(f), undefined, factBlind(key)),
          state?.status ?? "current",
          state?.supersededBy ?? null,
          stored.sealedChars,
          ...ownerRowGuardParams(t, write.guard),
        ],
      );
    },
    sources: (scope, seq, list) =>
      command(
        `INSERT INTO ${sources} (scope, fact_seq, idx, session_id, message_id)
         SELECT $1, $2, u.i - 1, u.s, u.m FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS u(s, m, i)`,
        [scope, seq, list.map((s) => s.sessionId), list.map((s) => s.messageId)],
      ),
    byId: (scope, id) =>
      query(`SELECT ${FACT_COLUMNS} FROM ${facts} WHERE scope = $1 AND id = $2`, [scope, id]),
    status: (scope, id, status, by) =>
      query(
        `UPDATE ${facts} SET status = $1, superseded_by = $2 WHERE scope = $3 AND id = $4 AND status = 'current'
         RETURNING seq`,
        [status, by, scope, id],
      ),
    page: (scope, filter, before, limit) =>
      query(pageSql(t), [
        scope,
        before ?? Number.MAX_SAFE_INTEGER,
        filter.status,
        filter.sourcesIn ?? null,
        limit,
        filter.sourceSession ?? null,
      ]),
    bySeqs: (scope, seqs) =>
      query(`SELECT ${FACT_COLUMNS} FROM ${facts} WHERE scope = $1 AND seq = ANY($2::bigint[])`, [
        scope,
        seqs,
      ]),
    sourcesOf: (scope, seqs) =>
      query(
        `SELECT fact_seq, session_id, message_id FROM ${sources} WHERE scope = $1 AND fact_seq = ANY($2::bigint[])
         ORDER BY fact_seq, idx`,
        [scope, seqs],
      ),
    any: () => query(`SELECT 1 AS one FROM ${facts} LIMIT 1`),
    all: (after, limit) =>
      query(
        `SELECT ${FACT_COLUMNS} FROM ${facts} WHERE (scope, seq) > ($1, $2) ORDER BY scope, seq LIMIT $3`,
        [after?.scope ?? "", after?.seq ?? -1, limit],
      ),
    // By the (session_num, id) key of messages (and the session's shard on a distributed store). The lock is the
    // weakest a delete waits for: a delete begun earlier is waited for and its messages are then not found; one
    // begun later waits for the write's commit, and its own read of the facts' sources then finds the fact.
    stored: (sessionId, ids, lock) =>
      query(
        `SELECT m.id FROM ${t.messages} m WHERE m.session_num = (SELECT num FROM ${t.heads} WHERE session_id = $1)
           AND m.id = ANY($2::text[])${t.layout.onSession("m", "$1")}${lock ? " FOR KEY SHARE OF m" : ""}`,
        [sessionId, ids],
      ),
    sourceSessions: (after, limit) =>
      query(`SELECT DISTINCT session_id FROM ${sources} WHERE session_id > $1 ORDER BY session_id LIMIT $2`, [
        after ?? "",
        limit,
      ]),
    sourceMessages: (sessionId) =>
      query(`SELECT DISTINCT message_id FROM ${sources} WHERE session_id = $1`, [sessionId]),
    mark: (sessionId) =>
      query(`SELECT through, holder, lease_until, failures FROM ${marks} WHERE session_id = $1`, [sessionId]),
    claim: (sessionId, holder, now, until) => query(claimSql(t), [sessionId, holder, until, now]),
    advance: (sessionId, holder, through, failures) =>
      query(
        `UPDATE ${marks} SET through = $1, failures = $2 WHERE session_id = $3 AND holder = $4 RETURNING 1 AS moved`,
        [through, failures, sessionId, holder],
      ),
    release: (sessionId, holder) =>
      command(`UPDATE ${marks} SET holder = NULL, lease_until = 0 WHERE session_id = $1 AND holder = $2`, [
        sessionId,
        holder,
      ]),
    sessionFacts: (sessionId) =>
      query(
        `SELECT DISTINCT f.seq, f.scope, f.id, f.status, f.superseded_by FROM ${sources} s
         JOIN ${facts} f ON f.scope = s.scope AND f.seq = s.fact_seq WHERE s.session_id = $1`,
        [sessionId],
      ),
    messageFacts: (sessionId, ids) => {
      const among = (alias: string) => (ids ? ` AND ${alias}message_id = ANY($2::text[])` : "");
      return query(
        `SELECT f.seq, f.scope, f.id, f.status, f.superseded_by, (SELECT count(*) FROM ${sources} o WHERE o.scope = f.scope
           AND o.fact_seq = f.seq AND NOT (o.session_id = $1${among("o.")}))::int AS kept
         FROM ${facts} f WHERE (f.scope, f.seq) IN (
           SELECT scope, fact_seq FROM ${sources} WHERE session_id = $1${among("")})`,
        ids ? [sessionId, ids] : [sessionId],
      );
    },
    dropSources: (sessionId, ids) =>
      command(
        `DELETE FROM ${sources} WHERE session_id = $1${ids ? " AND message_id = ANY($2::text[])" : ""}`,
        ids ? [sessionId, ids] : [sessionId],
      ),
    drop: (scopes, seqs) => [
      command(
        `DELETE FROM ${sources} s USING unnest($1::text[], $2::bigint[]) AS g(scope, seq)
         WHERE s.scope = g.scope AND s.fact_seq = g.seq`,
        [scopes, seqs],
      ),
      command(
        `DELETE FROM ${facts} f USING unnest($1::text[], $2::bigint[]) AS g(scope, seq)
         WHERE f.scope = g.scope AND f.seq = g.seq`,
        [scopes, seqs],
      ),
    ],
    restore: (scopes, ids) => command(restoreSql(t), [scopes, ids]),
    relink: (scopes, ids, successors) => command(relinkSql(t), [scopes, ids, successors]),
    dropMark: (sessionId) => command(`DELETE FROM ${marks} WHERE session_id = $1`, [sessionId]),
  };
}

/**
 * A key rotation's statements of facts: facts sealed under a key, re-sealed (sql/rekey/finish.ts), and an owner's
 * facts in clear sealed, their vectors dropped (sql/rekey/clear.ts).
 */
export function postgresFactRekey(t: Tables): Pick<RekeyTable, FactRekeyStatement> {
  const { facts } = factTables(t);
  const ownedScopes = (owner: string, ids: string[]) => [`o:${owner}`, ...ids.map((id) => `s:${id}`)];
  return {
    clearFacts: (owner, ids) =>
      query(
        `SELECT scope, seq::text AS seq, id, text, about FROM ${facts}
         WHERE sealed_chars IS NULL AND scope = ANY($1::text[])`,
        [ownedScopes(owner, ids)],
      ),
    factVectorsPresent: () =>
      query(
        `SELECT 1 AS found FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'embedding'
         AND NOT attisdropped`,
        [facts],
      ),
    dropFactVectors: (owner, ids) =>
      command(
        `UPDATE ${facts} SET embedding = '{}'::float4[] WHERE embedding IS NOT NULL AND scope = ANY($1::text[])`,
        [ownedScopes(owner, ids)],
      ),
    factsUnder: (start) =>
      query(
        `SELECT scope, seq::text AS seq, id, text FROM ${facts}
         WHERE sealed_chars IS NOT NULL AND left(text, $1) = $2`,
        [start.length, start],
      ),
    // The vector follows the text; a fact written meanwhile (its text changed) keeps its writer's form.
    writeFact: (row, key, words) => {
      const stored = storedFactText(key, row.scope, row.id, words);
      return query(
        `UPDATE ${facts} SET text = $3, about = $7, sealed_chars = $4, search = $5::tsvector
         WHERE scope = $1 AND seq = $2::bigint AND text = $6 RETURNING seq`,
        [
          row.scope,
          row.seq,
          stored.text,
          stored.sealedChars,
          toTsvector(factSearchText(words), undefined, factBlind(key)),
          row.text,
          stored.about,
        ],
      );
    },
  };
}
