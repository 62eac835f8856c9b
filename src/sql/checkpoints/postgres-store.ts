/** Postgres's checkpoints: the steps in sql/checkpoints/steps.ts over sql/checkpoints/postgres.ts. */

import { SessionError } from "../../errors.js";
import type { Executor } from "../engines/postgres/client.js";
import { runProgram } from "../engines/postgres/program.js";
import type { KeyedTables } from "../sealing/postgres.js";
import { checksOwner, guardedKey, refused, writeGuardPasses } from "../sealing/postgres-key-guard.js";
import { postgresCheckpoints } from "./postgres.js";
import { singleGuard, singlePasses } from "./postgres-guard.js";
import { SqlCheckpoints } from "./steps.js";

/**
 * Postgres's checkpoints: on one server a write is one statement with its guard inside (postgres-guard.ts), on a
 * cluster a transaction of statements after its guard's; a read is one snapshot, a round trip per statement.
 */
export class PostgresCheckpoints extends SqlCheckpoints {
  constructor(ready: () => Promise<Executor>, t: KeyedTables) {
    super({
      statements: postgresCheckpoints(t),
      // The key is looked up before the transaction and guarded by its first statement (key-guard.ts
      // writeGuardPasses: the program's statements carry no guard): a key another process recorded, rotated or
      // erased meanwhile refuses the write, which looks it up again.
      // An owner expected is checked by the guard's statement itself (one server): no statement more. Read when
      // asked: a Citus store sets its layout after the tables are named.
      get checksOwner() {
        return checksOwner(t);
      },
      write: async (sessionId, program, expect) => {
        const executor = await ready();
        const what = `the checkpoints of session "${sessionId}"`;
        for (let tries = 1; ; tries++) {
          const form = await guardedKey(executor.query, t, sessionId, what);
          const written = await executor.transaction(async (query) => {
            if (!(await writeGuardPasses(query, t, sessionId, form, expect))) return false;
            await runProgram(query, program(form.key));
            return true;
          });
          if (written) return;
          refused(t, sessionId, form, tries, what);
        }
      },
      // One statement with its guard inside (postgres-guard.ts), on one server; a cluster's guard is a statement
      // of its own (the write then runs as a program).
      single: async (sessionId, build, expect) => {
        if (!t.layout.guardsInside) return undefined;
        const executor = await ready();
        const what = `the checkpoints of session "${sessionId}"`;
        for (let tries = 1; ; tries++) {
          const form = await guardedKey(executor.query, t, sessionId, what);
          const statement = build(form.key, singleGuard(t, form, expect));
          const row = await singlePasses(executor, form, statement);
          if (row === undefined) {
            refused(t, sessionId, form, tries, what);
            continue;
          }
          if (expect && row.registered !== true) {
            throw new SessionError(
              "CONFLICT",
              `Session "${sessionId}" is not registered to the owner the write expects`,
            );
          }
          return row;
        }
      },
      // One snapshot: the reads run in one read-only transaction; sealed rows open with the keys of that moment.
      read: async (program, open) => {
        const executor = await ready();
        const keys = t.keys;
        return executor.transaction(async (query) => {
          const found = await runProgram(query, program);
          return keys ? keys.run(query, (k) => open(found, k)) : open(found, undefined);
        });
      },
    });
  }
}
