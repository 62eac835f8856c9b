import type { NewSessionRecord, OwnerDigest, SessionInfo } from "../contract/registry.js";
import type { SqliteBackend } from "../sql/backend/sqlite.js";
import { deleteKeyed } from "../sql/context-records/sqlite.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { runInTransaction, runProgram } from "../sql/engines/sqlite/program.js";
import { sqliteErase } from "../sql/erase/sqlite.js";
import { eraseUnder } from "../sql/erase/steps.js";
import { sqliteFacts } from "../sql/facts/sqlite.js";
import { forgetFacts } from "../sql/facts/sqlite-engine.js";
import { STORE_TABLES } from "../sql/media/sqlite-tables.js";
import type { Program } from "../sql/program.js";
import { NEXT_ACTIVITY, sqliteRegistry } from "../sql/registry/sqlite.js";
import { SqlRegistry, sessionRow } from "../sql/registry/steps.js";
import { forgetRoomRows } from "../sql/rooms/sqlite.js";
import { retokenizeOwned } from "../sql/search/sqlite-retokenize.js";
import { forgetStream } from "../sql/streams/sqlite-store.js";
import { ownerDigestsOf } from "../store/crypto/owner-digests.js";
import type { OwnerGuard } from "../store/crypto/write-guard.js";
import type { ErasureCondition } from "../store/erasure.js";
import { parseOwner } from "../store/owner.js";
import type { RegistryDeletion, RegistryErasure, StoredName } from "../store/registry-base.js";
import { openedName, storedSessionName } from "../store/session-names.js";
import { cursorOf, loggedAt } from "../store/written.js";
import { deleteSessionContent } from "./writes.js";

export { NEXT_ACTIVITY };

/** The erasure's statements, over the helpers a session's delete, clear and stream drop run too. */
const SQLITE_ERASE = sqliteErase({
  links: STORE_TABLES.links,
  deleteContent: deleteSessionContent,
  deleteKeyed,
  forgetStream,
  facts: sqliteFacts,
});

/** The session registry in SQLite (table `agent_sessions`); every write is one statement or one transaction. */
export class SqliteSessionRegistry extends SqlRegistry {
  /**
   * `store`: the feed and change log a delete publishes to, read at each delete (the store makes them after this);
   * omitted by the store's parts that only read or count (nothing they write is published).
   */
  constructor(
    private readonly driver: SqlDriver,
    private readonly store?: Pick<SqliteBackend, "feed" | "changeLog">,
  ) {
    super(sqliteRegistry, store);
    const keys = driver.keys;
    // Only a store opened with a keyring has keys to forget (the method's presence says so).
    if (keys?.keyed) this.forgetKey = (owner) => keys.forget(parseOwner(owner));
    // Every store's connection has keys (a keyless one's answer none, or refuse an owner with sealed content).
    if (keys) this.ownerDigests = async (owner) => ownerDigestsOf(keys, parseOwner(owner));
  }

  /** The owner's keyed digests (see SessionRegistry.ownerDigests). */
  readonly ownerDigests?: (owner: string) => Promise<OwnerDigest[]>;

  /** Destroys an owner's key and the store's record of it (see SessionRegistry.forgetKey). */
  readonly forgetKey?: (owner: string) => Promise<void>;

  // The driver refuses every statement with `CLOSED` once the store is closed.
  protected assertOpen(): void {}

  protected override ownerChanged(id: string): void {
    this.driver.keys?.forgetOwnerOf(id);
  }

  protected async run<T>(program: () => Program<T>, transaction: boolean): Promise<T> {
    return transaction ? runInTransaction(this.driver, program) : runProgram(this.driver, program());
  }

  protected override async storedName(
    id: string,
    owner: string | null | undefined,
    name: string,
  ): Promise<StoredName> {
    return storedSessionName(this.driver.keys, id, owner, name);
  }

  protected override async openNames(rows: SessionInfo[]): Promise<SessionInfo[]> {
    return rows.map((row) => openedName(this.driver.keys, row));
  }

  protected override async writeCreate(
    record: NewSessionRecord,
    guard?: OwnerGuard,
  ): Promise<SessionInfo | null> {
    // With an owner, the messages the session may hold already take its token in the same transaction.
    if (record.owner === undefined || record.owner === null) return super.writeCreate(record, guard);
    return this.driver.transaction(() => {
      const info = runProgram(this.driver, sessionRow(sqliteRegistry.create(record, guard)));
      if (info) retokenizeOwned(this.driver, record.id);
      return info;
    });
  }

  /**
   * Removes the row, the session's messages, overlays and head, its recorded blocks and entries and the given
   * unrecorded blocks (sql/context-records/ deleteKeyed) in one transaction, which also
   * records the session's `clear` in the change log when a head or a row was there.
   */
  protected async writeDelete(id: string, keys: string[]): Promise<RegistryDeletion> {
    return this.driver.transaction(() => {
      const head = this.driver.get<{ num: number }>(
        "SELECT num FROM agent_session_heads WHERE session_id = ?",
        [id],
      );
      if (head) {
        deleteSessionContent(this.driver, head.num);
        this.driver.run("DELETE FROM agent_session_heads WHERE num = ?", [head.num]);
      }
      forgetStream(this.driver, id); // a running answer's chunks go with the session
      forgetRoomRows(this.driver, id); // the storage rooms' rows of it too (a LangGraph thread's checkpoints)
      forgetFacts(this.driver, id); // every fact with a source in it, and its learn mark
      deleteKeyed(this.driver, id, keys);
      const removed =
        this.driver.get("DELETE FROM agent_sessions WHERE id = ? RETURNING id", [id]) !== undefined;
      if (!head && !removed) return { removed, cleared: undefined }; // nothing was there: nothing to announce
      const log = this.store?.changeLog;
      return {
        removed,
        cleared: loggedAt(log?.record({ sessionId: id, type: "clear", ids: [] })),
      };
    });
  }

  // One write transaction per session: the condition is read under the write lock, so two sweepers never both
  // erase a session (the second finds nothing), and a reader sees the whole session or none of it.
  protected async writeErase(
    id: string,
    keys: string[],
    condition: ErasureCondition,
  ): Promise<RegistryErasure | null> {
    return this.driver.transaction(() => {
      const counts = runProgram(this.driver, eraseUnder(SQLITE_ERASE, id, keys, condition));
      if (counts === null) return null;
      const log = this.store?.changeLog;
      const logged = cursorOf(log?.record({ sessionId: id, type: "erased", ids: [] }));
      return { counts, logged };
    });
  }
}
