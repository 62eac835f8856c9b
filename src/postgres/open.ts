/**
 * What a PostgresStore's first use does before any statement of its own (store.ts `ready()`, once it has set the
 * layout): the connection opened, a schema without tables refused for `openExisting`, the tables migrated, the
 * layout checked (on Citus its open steps run), the vector tables placed, and the reference's tables adopted. A
 * failure closes the connection it opened.
 */
import { SessionError } from "../errors.js";
import { type Executor, openExecutor, type PostgresSource } from "../sql/engines/postgres/client.js";
import { checkLayout } from "../sql/engines/postgres/layout-check.js";
import type { KeyedTables } from "../sql/sealing/postgres.js";
import { prepareVectors } from "../sql/vectors/postgres-citus.js";
import type { AdoptionReport } from "../store/adopt/adopt.js";
import { adoptOnOpen } from "./adopt/adopt.js";
import { citusSteps } from "./citus-steps.js";
import { migrate, schemaVersion } from "./schema.js";

/**
 * How the store opens: `mustExist` refuses a schema without tables; `vectors`: it was opened with an embedder;
 * `cluster`: its layout is the Citus one (store.ts loaded it).
 */
export interface OpenSettings {
  readonly mustExist: boolean;
  readonly vectors: boolean;
  readonly cluster: boolean;
}

/** Opens and readies the store's connection: the executor, and what opening adopted from the reference's tables. */
export async function openStore(
  source: PostgresSource,
  tables: KeyedTables,
  settings: OpenSettings,
): Promise<{ executor: Executor; adopted: AdoptionReport | null }> {
  const executor = await openExecutor(source, tables.prepare);
  try {
    if (settings.mustExist && (await schemaVersion(executor, tables)) === 0) {
      const where = tables.schema ? `schema "${tables.schema}"` : "the search_path";
      const prefix = tables.prefix ? ` with prefix "${tables.prefix}"` : "";
      throw new SessionError("NOT_FOUND", `no agent-session tables in ${where}${prefix}`);
    }
    await migrate(executor, tables);
    const sharded = await checkLayout(executor, tables);
    if (settings.cluster) await citusSteps(tables).open(executor, tables, sharded);
    if (settings.vectors && tables.layout.shardsNewTables) await prepareVectors(executor, tables);
    return { executor, adopted: await adoptOnOpen(executor, tables) };
  } catch (error) {
    await executor.close().catch(() => undefined);
    throw error;
  }
}
