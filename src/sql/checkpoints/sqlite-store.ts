/** SQLite's checkpoints: the steps in steps.ts over sqlite.ts, with the engine's key handling (the store wires it). */

import { SessionError } from "../../errors.js";
import type { SqlDriver } from "../engines/sqlite/driver.js";
import { runInTransaction, runProgram } from "../engines/sqlite/program.js";
import { sqliteCheckpoints } from "./sqlite.js";
import { SqlCheckpoints } from "./steps.js";

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
