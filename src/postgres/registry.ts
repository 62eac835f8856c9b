/**
 * The session registry of SessionManager on Postgres (table `agent_sessions`, migration 2). Every write is one
 * statement, except `delete`, which is one transaction, and an `addUsage` that updated no row (one more, to tell
 * an unknown id from a refused total). Timestamps come from the server's clock (the moment the
 * statement arrived, to the millisecond), so many processes on many hosts agree on "newest activity"; `activity`
 * is a sequence value drawn by every write and breaks ties within a millisecond.
 */

import type { OwnerDigest, SessionInfo } from "../contract/registry.js";
import type { PostgresBackend } from "../sql/backend/postgres.js";
import { deleteKeyed } from "../sql/context-records/postgres.js";
import type { Executor, Query } from "../sql/engines/postgres/client.js";
import { runInTransaction, runProgram } from "../sql/engines/postgres/program.js";
import { statement } from "../sql/engines/postgres/tables.js";
import { forgetFacts } from "../sql/facts/postgres-engine.js";
import { releaseSession } from "../sql/media/postgres.js";
import type { Program } from "../sql/program.js";
import { postgresRegistry } from "../sql/registry/postgres.js";
import { deleteStatement } from "../sql/registry/postgres-writes.js";
import { SqlRegistry } from "../sql/registry/steps.js";
import { forgetRoomRows } from "../sql/rooms/postgres.js";
import type { KeyedTables } from "../sql/sealing/postgres.js";
import { forgetStreamSql } from "../sql/streams/postgres.js";
import { ownerDigestsOf } from "../store/crypto/owner-digests.js";
import type { ErasureCondition } from "../store/erasure.js";
import { parseOwner } from "../store/owner.js";
import type { RegistryDeletion, RegistryErasure, StoredName } from "../store/registry-base.js";
import { openedName, storedSessionName } from "../store/session-names.js";
import { loggedAt } from "../store/written.js";
import { eraseLocked } from "./erase.js";

type Ready = () => Promise<Executor>;

// Locks the session's head first (as every session write does, see writes.ts): appends wait, and the statement
// after it reads a snapshot that includes every write committed to the session before the lock was granted.
const lockHeadSql = statement((t) => `SELECT num FROM ${t.heads} WHERE session_id = $1 FOR UPDATE`);

/** The session registry of a {@link PostgresStore}. */
export class PostgresSessionRegistry extends SqlRegistry {
  /**
   * `store`: the feed and change log a delete publishes to, read at each delete (the store makes them after this);
   * omitted by the parts that only read, count or adopt (nothing they write is published).
   */
  constructor(
    private readonly ready: Ready,
    private readonly t: KeyedTables,
    private readonly store?: Pick<PostgresBackend, "feed" | "changeLog">,
  ) {
    super(postgresRegistry(t), store);
    const keys = t.keys;
    // Only a store opened with a keyring has keys to forget (the method's presence says so).
    if (keys?.keyed) this.forgetKey = async (owner) => keys.forget((await ready()).query, parseOwner(owner));
    // Every store has keys (a keyless one's answer none, or refuse an owner with sealed content).
    if (keys) {
      this.ownerDigests = async (owner) => {
        const executor = await ready();
        return keys.run(executor.query.bind(executor), (k) => ownerDigestsOf(k, parseOwner(owner)));
      };
    }
  }

  /** The owner's keyed digests (see SessionRegistry.ownerDigests). */
  readonly ownerDigests?: (owner: string) => Promise<OwnerDigest[]>;

  /** Destroys an owner's key and the store's record of it (see SessionRegistry.forgetKey). */
  readonly forgetKey?: (owner: string) => Promise<void>;

  // `ready()` refuses with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected override ownerChanged(id: string): void {
    this.t.keys?.unclear(id);
  }

  protected override async storedName(
    id: string,
    owner: string | null | undefined,
    name: string,
    fresh: boolean,
  ): Promise<StoredName> {
    const keys = this.t.keys;
    if (!keys) return storedSessionName(undefined, id, owner, name);
    const query = (await this.ready()).query;
    return (await keys.guarded(query, (k) => storedSessionName(k, id, owner, name), fresh)).value;
  }

  // Opening a name reads no record: the row names its owner, whose keys the keyring answers.
  protected override async openNames(rows: SessionInfo[]): Promise<SessionInfo[]> {
    return rows.map((row) => openedName(this.t.keys?.keys, row));
  }

  // Alone, each statement is a named prepared one where the connection can (the registry's reads are hot).
  protected async run<T>(program: () => Program<T>, transaction: boolean): Promise<T> {
    const executor = await this.ready();
    if (transaction) return runInTransaction(executor, program);
    const prepared: Query = (sql, params) => executor.query(sql, params, true);
    return runProgram(prepared, program());
  }

  /**
   * Removes the row, the session's messages, overlays and head, its recorded blocks and entries and the given
   * unrecorded blocks (sql/context-records/ deleteKeyed) in one transaction, which also
   * records the session's `clear` in the change log when a head or a row was there.
   */
  protected async writeDelete(id: string, keys: string[]): Promise<RegistryDeletion> {
    const executor = await this.ready();
    const log = this.store?.changeLog;
    return executor.transaction(async (query) => {
      const [head] = await query<{ num: string | number }>(lockHeadSql(this.t), [id]);
      if (head) await releaseSession(query, this.t, { num: head.num, id });
      const num = head?.num ?? null;
      const [result] = await query<{ existed: boolean }>(...deleteStatement(this.t, id, num));
      await deleteKeyed(query, this.t, id, keys);
      await query(forgetStreamSql(this.t), [id]); // a running answer's chunks go with the session
      for (const s of forgetRoomRows(this.t, id)) await query(s.sql, s.params); // the storage rooms' rows too
      await forgetFacts(query, this.t, id); // every fact with a source in it, and its learn mark
      const removed = result?.existed === true;
      if (!head && !removed) return { removed, cleared: undefined }; // nothing was there: nothing to announce
      const clear = { sessionId: id, type: "clear" as const, ids: [] };
      return { removed, cleared: loggedAt(log ? await log.recordIn(query, clear) : undefined) };
    });
  }

  protected async writeErase(
    id: string,
    keys: string[],
    condition: ErasureCondition,
  ): Promise<RegistryErasure | null> {
    return eraseLocked(await this.ready(), this.t, this.store?.changeLog, id, keys, condition);
  }
}
