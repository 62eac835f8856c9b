/** Postgres's kept streams: the steps in sql/streams/steps.ts over sql/streams/postgres.ts. */

import { isSealed } from "../../store/crypto/seal.js";
import type { Executor } from "../engines/postgres/client.js";
import { guardParams } from "../engines/postgres/owner-guard.js";
import { runInTransaction, runProgram } from "../engines/postgres/program.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { clusterGuardPasses, guardedKey, refused, reliesOnGuard } from "../sealing/postgres-key-guard.js";
import { postgresStreams } from "./postgres.js";
import { SqlStreams, type StreamEngine } from "./steps.js";

/** Postgres's kept streams: each call one statement (a start: one transaction). */
export class PostgresStreams extends SqlStreams {
  constructor(ready: () => Promise<Executor>, t: KeyedTables) {
    super(engine(ready, t));
  }
}

// The guard's parameters of an append's statement: none on a cluster, whose statement has no guard inside.
const guardInsideParams = (t: KeyedTables, form: Parameters<typeof guardParams>[1]) =>
  t.layout.guardsInside ? guardParams(t, form) : [];

// The key of an append is looked up before its statement, which guards it (key-guard.ts) and, refused, is sealed
// again; a read looks the owner up only for sealed chunks.
const engine = (ready: () => Promise<Executor>, t: KeyedTables): StreamEngine => ({
  statements: postgresStreams(t),
  run: async (program, transaction) => {
    const executor = await ready();
    return transaction ? runInTransaction(executor, program) : runProgram(executor.query, program());
  },
  read: async (program, open) => {
    const executor = await ready();
    const found = await runProgram(executor.query, program);
    if (!found) return null;
    const keys = t.keys;
    return keys && found.chunks.some((c) => isSealed(c.chunk))
      ? keys.run(executor.query, (k) => open(found, k))
      : open(found, undefined);
  },
  append: async (sessionId, streamId, write) => {
    const executor = await ready();
    for (let tries = 1; ; tries++) {
      // Sealed and guarded as a message of the session (key-guard.ts); DECRYPT_FAILED without the owner's key.
      const form = await guardedKey(executor.query, t, sessionId, `session "${sessionId}"`);
      // On a cluster the guard is a statement before the append, in one transaction with it (key-guard.ts), and the
      // append locks the head before it writes the chunks (sql/streams/postgres.ts): one transaction on one node.
      const guarded = !t.layout.guardsInside && reliesOnGuard(t, form);
      const written =
        guarded || !t.layout.insertsInCtes
          ? await executor.transaction(async (query) =>
              !guarded || (await clusterGuardPasses(query, t, sessionId, form))
                ? runProgram(query, write({ key: () => form.key, guard: [] }))
                : null,
            )
          : await runProgram(
              executor.query,
              write({ key: () => form.key, guard: guardInsideParams(t, form) }),
            );
      if (written !== null) return written;
      refused(t, sessionId, form, tries, `the chunks of stream "${streamId}"`);
    }
  },
});
