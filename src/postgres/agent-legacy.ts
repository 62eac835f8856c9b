import { assertLegacyPrefix, type LegacyAgentSession } from "../store/agent-legacy.js";
import type { Executor } from "./connection/client.js";

/**
 * Reads the tables the agent runtime's old `PostgresSessionStorage` wrote (`<prefix>sessions`, `…messages`,
 * `…usage` on the connection's search_path), so they can be moved into the store; nothing here writes to them.
 */
export class PostgresLegacyAgentTables {
  constructor(
    private readonly ready: () => Promise<Executor>,
    private readonly prefix: string,
  ) {
    assertLegacyPrefix(prefix);
  }

  /** True when the old session table exists on the search_path. */
  async exists(): Promise<boolean> {
    const db = await this.ready();
    const rows = await db.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
      `${this.prefix}sessions`,
    ]);
    return rows[0]?.present === true;
  }

  /** Ids of the old sessions, oldest first. */
  async sessionIds(): Promise<string[]> {
    const db = await this.ready();
    const rows = await db.query<{ id: string }>(
      `SELECT id FROM ${this.prefix}sessions ORDER BY created_at, id`,
    );
    return rows.map((row) => row.id);
  }

  /** One old session in one statement (one snapshot); undefined when it is gone. */
  async read(id: string): Promise<LegacyAgentSession | undefined> {
    const p = this.prefix;
    const db = await this.ready();
    const rows = await db.query<{ part: number; body: string }>(
      `SELECT 0 AS part, 0 AS seq, json_build_array(parent_id, metadata, created_at, updated_at)::text AS body
         FROM ${p}sessions WHERE id = $1
       UNION ALL SELECT 1, seq, body FROM ${p}messages WHERE session_id = $1
       UNION ALL SELECT 2, seq, body FROM ${p}usage WHERE session_id = $1
       ORDER BY 1, 2`,
      [id],
    );
    const head = rows[0];
    if (head?.part !== 0) return undefined;
    const [parentId, metadata, createdAt, updatedAt] = JSON.parse(head.body) as [
      string | null,
      string,
      number,
      number,
    ];
    const bodies = (part: number) => rows.filter((row) => row.part === part).map((row) => row.body);
    return {
      id,
      parentId,
      metadata,
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
      messages: bodies(1),
      usage: bodies(2),
    };
  }
}
