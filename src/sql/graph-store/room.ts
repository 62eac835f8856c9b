/**
 * The graph store's room (src/sql/room.ts), what the engines take of it through the one list
 * (src/sql/rooms/list.ts): its table on each engine (SQLite's migration 28, Postgres's 27), one row per item, its
 * owner first, each its owner's (owner-data.ts; on a Citus cluster by owner; sealed as its `ITEM` kind), re-sealed
 * by a key rotation (rekey.ts), and its store, `graphItems` of each engine's store: `SqlGraphItems` (steps.ts) over
 * its statements written once (statements.ts) and the engine's runner.
 */
import type { PostgresNames, Room } from "../room.js";
import { numbered, positional } from "../room-engine.js";
import { GRAPH_ITEM_TRANSFER_FIELDS, graphItemTables, ITEM } from "./owner-data.js";
import { itemRekey, itemRekeyStatements } from "./rekey.js";
import { graphItemStatements } from "./statements.js";
import { SqlGraphItems } from "./steps.js";

/** SQLite's migration 28: the items' table. */
const SQLITE_TABLES = [
  `CREATE TABLE IF NOT EXISTS agent_graph_items (
    owner TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    fields TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ttl_ms INTEGER,
    expires_at INTEGER,
    PRIMARY KEY (owner, namespace, key)
  ) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS agent_graph_items_namespace ON agent_graph_items(namespace, key)",
  "CREATE INDEX IF NOT EXISTS agent_graph_items_expiry ON agent_graph_items(expires_at) WHERE expires_at IS NOT NULL",
];

/** Postgres's migration 27: the items' table. */
function postgresTables(n: PostgresNames): string[] {
  const items = n.table("agent_graph_items");
  return [
    `CREATE TABLE IF NOT EXISTS ${items} (
      owner text NOT NULL,
      namespace text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      value text NOT NULL,
      fields text,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      ttl_ms bigint,
      expires_at bigint,
      PRIMARY KEY (owner, namespace, key)
    )`,
    `CREATE INDEX IF NOT EXISTS ${n.index("agent_graph_items_namespace")} ON ${items} (namespace, key)`,
    `CREATE INDEX IF NOT EXISTS ${n.index("agent_graph_items_expiry")} ON ${items} (expires_at) WHERE expires_at IS NOT NULL`,
  ];
}

/** The graph store's room: one table of items, each its owner's (sealed with its key). */
export const graphStoreRoom = {
  name: "graph-store",
  transferFields: GRAPH_ITEM_TRANSFER_FIELDS,
  store: {
    property: "graphItems",
    make: (engine) => new SqlGraphItems(engine, graphItemStatements(engine)),
  },
  sealed: [ITEM],
  sqlite: {
    migrations: [{ version: 28, statements: SQLITE_TABLES }],
    ownerData: () => graphItemTables({ citus: "none", purge: "zeroed" }),
    rekey: itemRekey(itemRekeyStatements("sqlite", "agent_graph_items", positional)),
  },
  postgres: {
    migrations: [{ version: 27, statements: postgresTables }],
    // By owner: one owner's items on one node, every read and write of one owner routed there.
    ownerData: () => graphItemTables({ citus: "by-key", citusColumn: "owner", purge: "rewrite" }),
    rekey: (n) => itemRekey(itemRekeyStatements("postgres", n.table("agent_graph_items"), numbered)),
  },
} as const satisfies Room;
