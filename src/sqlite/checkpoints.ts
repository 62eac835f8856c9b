/** SQLite's checkpoints: the steps in sql/checkpoints/steps.ts over sql/checkpoints/sqlite.ts. */

import { SessionError } from "../errors.js";
import { sqliteCheckpoints } from "../sql/checkpoints/sqlite.js";
import { SqlCheckpoints } from "../sql/checkpoints/steps.js";
import type { SqlDriver } from "../sql/engines/sqlite/driver.js";
import { runInTransaction, runProgram } from "../sql/engines/sqlite/program.js";

/** SQLite's checkpoints: a write is one transaction, a read one snapshot. */
export class SqliteCheckpoints extends SqlCheckpoints {
  constructor(driver: SqlDriver) {
    super({
      statements: sqliteCheckpoints,
      // An owner expected is read inside the write's transaction: one indexed lookup, no round trip.
      checksOwner: true,
      // The owner's key is looked up inside the write's transaction (BEGIN IMMEDIATE: no other writer between).
      write: async (sessionId, program, expect) =>
        runInTransaction(driver, () => {
          if (expect) {
            const row = driver.get<{ owner: string | null }>(
              "SELECT owner FROM agent_sessions WHERE id = ?",
              [sessionId],
            );
            if (row === undefined || (row.owner ?? null) !== expect.owner) {
              throw new SessionError(
                "CONFLICT",
                `Session "${sessionId}" is not registered to the owner the write expects`,
              );
            }
          }
          return program(
            driver.keys?.keyFor(sessionId, true, `the checkpoints of session "${sessionId}"`) ?? null,
          );
        }),
      read: async (program, open) => driver.read(() => open(runProgram(driver, program), driver.keys)),
    });
  }
}
