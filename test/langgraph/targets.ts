// The stores LangGraph's conformance suite runs on (the *.vitest.ts files): each checkpointer a fresh store, closed
// and its files or schema dropped after; a Postgres run in a database of its own, dropped at the end.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { AgentSessionSaver } from "../../src/langgraph/index.js";
import { PostgresStore } from "../../src/postgres/store.js";
import { SqliteStore } from "../../src/sqlite/store.js";

type Closable = AgentSessionSaver & { close(): Promise<void> };

const closing = (saver: AgentSessionSaver, close: () => Promise<void>): Closable =>
  Object.assign(saver, { close });

/** A checkpointer factory over SQLite files of `driver`. */
export function sqliteTarget(driver: "better-sqlite3" | "node:sqlite") {
  const dir = mkdtempSync(join(tmpdir(), "agent-session-langgraph-"));
  let n = 0;
  return {
    create: async () => {
      const store = new SqliteStore(join(dir, `saver-${++n}.db`), { driver });
      return closing(new AgentSessionSaver(store), () => store.close());
    },
    destroy: async (saver: AgentSessionSaver) => (saver as Closable).close(),
    end: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Null when the server at `url` answers, else why not (an error under CI=true). */
export async function unreachable(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    return null;
  } catch (error) {
    const reason = `PostgreSQL at ${url} is unreachable (${(error as Error).message})`;
    if (process.env.CI === "true") throw new Error(`${reason}; CI=true requires a running server`);
    return reason;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A checkpointer factory on a database of its own on the server at `url` (`distributed`: a Citus cluster). */
export function postgresTarget(url: string, distributed = false) {
  const database = `lg_saver_${process.pid}_${Date.now().toString(36)}`;
  const admin = () => new pg.Client({ connectionString: url });
  const at = new URL(url);
  at.pathname = `/${database}`;
  let pool: pg.Pool | undefined;
  let n = 0;
  return {
    begin: async () => {
      const c = admin();
      await c.connect();
      await c.query(`CREATE DATABASE ${database}`);
      if (distributed) {
        await c.end();
        const d = new pg.Client({ connectionString: at.href });
        await d.connect();
        await d.query("CREATE EXTENSION IF NOT EXISTS citus");
        await d.end();
      } else await c.end();
      pool = new pg.Pool({ connectionString: at.href, max: 4 });
    },
    create: async () => {
      const store = await PostgresStore.open(pool as pg.Pool, { schema: `cp_${++n}`, distributed });
      return closing(new AgentSessionSaver(store), () => store.close());
    },
    destroy: async (saver: AgentSessionSaver) => (saver as Closable).close(),
    end: async () => {
      await pool?.end();
      const c = admin();
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    },
  };
}
