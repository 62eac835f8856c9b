import { assertLegacyPrefix, type LegacyAgentSession } from "../store/agent-legacy.js";
import { hydrateSync } from "../store/media/offload.js";
import type { SqlDriver } from "./connection/driver.js";
import { loadAttachments } from "./media/tables.js";

interface SessionRow {
  id: string;
  parent_id: string | null;
  metadata: string;
  created_at: number;
  updated_at: number;
}

/**
 * Reads the tables the agent runtime's old `SQLiteSessionStorage` wrote (`<prefix>sessions`, `…messages`,
 * `…usage`, `…attachments`), so they can be moved into the store; nothing here writes to them.
 */
export class SqliteLegacyAgentTables {
  constructor(
    private readonly driver: SqlDriver,
    private readonly prefix: string,
  ) {
    assertLegacyPrefix(prefix);
  }

  /** True when the old session table exists in this database. */
  exists(): boolean {
    return (
      this.driver.get("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?", [
        `${this.prefix}sessions`,
      ]) !== undefined
    );
  }

  /** Ids of the old sessions, oldest first. */
  sessionIds(): string[] {
    return this.driver
      .all<{ id: string }>(`SELECT id FROM ${this.prefix}sessions ORDER BY created_at, id`)
      .map((row) => row.id);
  }

  /** One old session with its media restored, in one read transaction; undefined when it is gone. */
  read(id: string): LegacyAgentSession | undefined {
    const p = this.prefix;
    return this.driver.transaction(() => {
      const row = this.driver.get<SessionRow>(
        `SELECT id, parent_id, metadata, created_at, updated_at FROM ${p}sessions WHERE id = ?`,
        [id],
      );
      if (!row) return undefined;
      const bodies = (table: string) =>
        this.driver.column<string>(`SELECT body FROM ${p}${table} WHERE session_id = ? ORDER BY seq`, [id]);
      const media = { attachments: `${p}attachments`, links: `${p}attachment_links` };
      const hasMedia = this.driver.get(
        "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?",
        [media.attachments],
      );
      let messages = bodies("messages");
      if (hasMedia) {
        // Pointers in the old rows name payloads of the old attachment table: restore them before moving.
        const parsed = messages.map((body) => JSON.parse(body) as object);
        hydrateSync(parsed, (hashes) => loadAttachments(this.driver, hashes, media));
        messages = parsed.map((message) => JSON.stringify(message));
      }
      return {
        id: row.id,
        parentId: row.parent_id,
        metadata: row.metadata,
        createdAt: Number(row.created_at),
        updatedAt: Number(row.updated_at),
        messages,
        usage: bodies("usage"),
      };
    });
  }
}
