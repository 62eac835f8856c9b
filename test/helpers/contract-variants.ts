// Which storage-contract variants a run covers. A variant that only changes our own code's path (a `:memory:`
// database instead of a file, values split at 4 KB, the `sql` tag adapter) runs the same JavaScript on every Node.js,
// so a run on a second Node (.ci/run's Node 24 run) may set AGENT_SESSION_CONTRACT_VARIANTS=drivers and keep one
// variant per driver: what differs there is the driver (better-sqlite3's major, node:sqlite), not our paths. Every
// variant still runs once per CI, in the first run; a skipped one says so in the test output.
import { describe } from "node:test";

const DRIVERS_ONLY = process.env.AGENT_SESSION_CONTRACT_VARIANTS === "drivers";

/**
 * Runs `declare` (a contract variant) unless this run keeps one variant per driver; then it declares a skipped
 * suite named `name` and prints why, so the skip is visible in any reporter.
 */
export function pathVariant(name: string, declare: () => void): void {
  if (!DRIVERS_ONLY) {
    declare();
    return;
  }
  const reason =
    "AGENT_SESSION_CONTRACT_VARIANTS=drivers: a path variant, the same code on every Node; it ran in the first run";
  console.log(`# skipping ${name}: ${reason}`);
  describe(`${name}: storage contract`, { skip: reason }, () => {});
}
