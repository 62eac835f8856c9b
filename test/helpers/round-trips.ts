// Counts the statements pg clients send, for the round-trip tests (test/mastra/, test/langgraph/): every statement a
// pg.Client sends while a counted run is under way (BEGIN and COMMIT included). The hook is installed once, on
// first use, and counts nothing outside counted().
import pg from "pg";

let counting = false;
let sent = 0;
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counting) sent++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}

/** How many statements the pool's clients send while `run` runs (one counted run at a time). */
export async function counted(run: () => Promise<unknown>): Promise<number> {
  install();
  sent = 0;
  counting = true;
  try {
    await run();
  } finally {
    counting = false;
  }
  return sent;
}
