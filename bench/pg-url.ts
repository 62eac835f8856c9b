/** The Postgres server the benches use: AGENT_SESSION_PG_URL, else this machine's (trust auth, database `test`). */
export const BENCH_PG_URL = process.env.AGENT_SESSION_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
