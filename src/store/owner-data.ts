/**
 * The shape of a backend's declaration of owner data: every table that can hold an owner's content, names or data
 * derived from them, and every column of it that holds text or bytes, classified once. A backend's purge derives its
 * work list from its declaration, docs/PRIVACY.md's table is rendered from it, and a schema test fails when a
 * migration creates a table or a text/bytes column the declaration does not classify (test/privacy/).
 */

import type { CodecKind, RoomKindName } from "./crypto/row-codec.js";

/** What a column holds: an owner's words, a name, data derived from them, an identifier, or nothing of an owner's. */
export type ColumnHolds =
  /** Message parts, summaries, block and entry text, stream chunks: what a person or model wrote. */
  | "content"
  /** Names a client chose that may say something: session names, block labels and keys, owner ids. */
  | "name"
  /** Made from content: search terms, vectors, hashes of content, a tool's failure reason quoting it. */
  | "derived"
  /** Ids the library or a client made (message, stream, compaction ids) and references between rows. */
  | "id"
  /** Bookkeeping without an owner's data (states, kinds, key checks, flags). */
  | "meta";

/** How a table's rows are tied to a session or an owner, so erasure can find them. */
export type OwnerTie =
  /** By the session's id or head number. */
  | "session"
  /** By a hash of the owner id. */
  | "owner"
  /**
   * By its record (`session_id` or `owner`, context/records.ts), written with the row; a row written before records
   * (or by a store of an app's own) by the block key or entry label that names the session or owner.
   */
  | "record"
  /** By a message row (a payload's links, a vector). */
  | "message"
  /** By reference count: a payload goes when no message links it. */
  | "payload"
  /** Not tied: the store's own bookkeeping, or a search index whose rows go with their message. */
  | "none";

/** Where a table's rows live on a Citus cluster (src/postgres/citus/placement.ts); "none" on SQLite. */
export type CitusPlacement = "by-session" | "by-key" | "reference" | "coordinator" | "none";

/** How a purge makes a deleted row's bytes unreadable in a table. */
export type PurgeWork =
  /** Postgres: VACUUM FULL (or VACUUM and REINDEX), then ANALYZE. */
  | "rewrite"
  /** SQLite: `secure_delete` zeroes a deleted row as it goes; the purge's checkpoint carries the pages to the file. */
  | "zeroed"
  /** SQLite FTS5: merged into one segment, which drops deleted rows' terms. */
  | "fts-merge"
  /** sqlite-vec: the rows of deleted vectors removed (its deletes zero the vector), by a connection that loads it. */
  | "vec-drain"
  /** Rewritten with its owning table (an FTS5 or sqlite-vec shadow table). */
  | "with-owner"
  /** SQLite's statistics: `ANALYZE` again, which replaces every sample with one of live rows. */
  | "reanalyze";

/** An optional feature whose first use makes tables (see {@link OwnerDataTable.madeBy}). */
export type OwnerDataFeature = "changeLog" | "embedder" | "sqlite-vec" | "ANALYZE";

/** One table that can hold an owner's data (or holds none but exists, so the schema test knows it). */
export interface OwnerDataTable {
  /** The table's name under the store's prefix. */
  table: string;
  /** What its rows are, in a few words. */
  holds: string;
  /** How its rows are tied to a session or an owner. */
  tie: OwnerTie;
  /** Its placement on a Citus cluster. */
  citus: CitusPlacement;
  /**
   * The column a "by-session" or "by-key" table is sharded by on Citus (citus/placement.ts distributes by it); "by-session"
   * tables are co-located with the first one declared (the heads) and default to `session_id`; "by-key" ones need it.
   */
  citusColumn?: string;
  /**
   * The "by-key" table declared before this one whose co-location group it joins (same distribution column type and
   * shard count, so rows with equal keys are on one node and joins on the key stay on one shard); none: a group of
   * its own.
   */
  citusColocate?: string;
  /** Whether a keyed owner's data is stored sealed here: "sealed", "clear" (visible, see PRIVACY.md), or "n/a". */
  sealed: "sealed" | "clear" | "n/a";
  /**
   * A sealed table's columns that are sealed for a keyed owner, each with its row-codec kind
   * (store/crypto/row-codec.ts: its label, its binding to the row's ids, its clear form; a storage room's own,
   * `roomKind`), or "clear" where a content column is knowingly kept in
   * clear (docs/PRIVACY.md, "Not covered yet"). Every content column of a sealed table is named here, and every kind
   * is some column's (test/privacy/owner-data.test.ts).
   */
  sealedAs?: Readonly<Record<string, CodecKind | RoomKindName | "clear">>;
  /** How an erasure (erase, eraseOwner, eraseAll, sweep, delete) reaches its rows. */
  erasure: string;
  /**
   * The rows an erasure itself writes here, by a column's value (the change log's `erased` event, which holds the
   * erased session's id and nothing else): the privacy contract does not count them as rows the erasure left.
   */
  erasureWrites?: Readonly<Record<string, string>>;
  /**
   * Why a delete (not an erasure) leaves a deleted session's rows here (the change log keeps its events until its
   * retention prunes them, docs/PRIVACY.md): the privacy contract's `delete` path does not count this table.
   */
  deleteKeeps?: string;
  /** How the purge makes deleted rows' bytes unreadable here. */
  purge: PurgeWork;
  /**
   * Made on first use of an optional feature, not by a migration: the change log (`changeLog`), the vector channel
   * (`embedder`), sqlite-vec's index (`sqlite-vec`: the vector channel where the connection loads it), SQLite's
   * statistics (`ANALYZE`). The privacy contract lets such a table be missing where its target leaves the feature off.
   */
  madeBy?: OwnerDataFeature;
  /**
   * Why the owner's session writes no row here but its erasure does (a queue the purge drains: vectors deleted but
   * still in sqlite-vec's table): the privacy contract expects no row from the session, only the baseline after the
   * erasure and purge.
   */
  erasureFills?: string;
  /** Every column holding text or bytes, classified. */
  columns: Readonly<Record<string, ColumnHolds>>;
}

/** A backend's declaration: every table it may create. */
export type OwnerDataDeclaration = readonly OwnerDataTable[];

/** The declared tables that a purge handles with `work`, in declaration order. */
export function tablesPurgedBy(declaration: OwnerDataDeclaration, work: PurgeWork): string[] {
  return declaration.filter((t) => t.purge === work).map((t) => t.table);
}

/** A table Citus distributes: its shard column, and the table it is co-located with ("none": a group of its own). */
export interface CitusShard {
  table: string;
  column: string;
  colocate: string;
}

/**
 * The declared tables a Citus layout distributes, in declaration order: every "by-session" table sharded by its
 * column and co-located with the first (the heads), every "by-key" table by its column, alone or co-located with the
 * by-key table its `citusColocate` names. A placed table without a column, or co-located with a table not declared
 * by-key before it, is a mistake in the declaration, so it throws.
 */
export function citusShards(declaration: OwnerDataDeclaration): CitusShard[] {
  const anchor = declaration.find((t) => t.citus === "by-session")?.table;
  const placed = declaration.filter((t) => t.citus === "by-session" || t.citus === "by-key");
  return placed.map((t, i) => {
    // A by-session table is sharded by `session_id` unless it says otherwise; a by-key one must name its key.
    const column = t.citusColumn ?? (t.citus === "by-session" ? "session_id" : undefined);
    if (column === undefined) throw new Error(`${t.table} is placed ${t.citus} with no citusColumn`);
    if (t.citusColocate !== undefined) {
      // Placed in declaration order: the group's first table must be distributed before this one joins it.
      const group = placed.slice(0, i).find((o) => o.table === t.citusColocate);
      if (t.citus !== "by-key" || group?.citus !== "by-key") {
        throw new Error(
          `${t.table} is co-located with ${t.citusColocate}, which is not a by-key table before it`,
        );
      }
      return { table: t.table, column, colocate: t.citusColocate };
    }
    const colocate = t.citus === "by-session" && t.table !== anchor ? (anchor as string) : "none";
    return { table: t.table, column, colocate };
  });
}

/** The declared tables with `placement` on a Citus cluster ("reference", "coordinator"), in declaration order. */
export function tablesPlaced(declaration: OwnerDataDeclaration, placement: CitusPlacement): string[] {
  return declaration.filter((t) => t.citus === placement).map((t) => t.table);
}

const cell = (text: string) => text.replace(/\|/g, "\\|");

// Whether a keyed owner's data is sealed here, with each sealed column's codec kind.
const keyedOwner = (t: OwnerDataTable) =>
  t.sealedAs === undefined
    ? t.sealed
    : `${t.sealed}: ${Object.entries(t.sealedAs)
        .map(([column, kind]) => `\`${column}\` ${kind === "clear" ? "in clear" : `as ${kind}`}`)
        .join(", ")}`;

/**
 * The declaration as a Markdown table (docs/PRIVACY.md holds it; a test checks the two agree); the Citus column only
 * where a table has a placement (a by-key table co-located with another names it). Ids are left out of "owner data in": what the table holds beside them is listed.
 */
export function ownerDataMarkdown(declaration: OwnerDataDeclaration): string {
  const citus = declaration.some((t) => t.citus !== "none");
  const held = (t: OwnerDataTable) =>
    Object.entries(t.columns)
      .filter(([, holds]) => holds === "content" || holds === "name" || holds === "derived")
      .map(([column, holds]) => `\`${column}\` (${holds})`)
      .join(", ") || "—";
  const rows = declaration.map((t) =>
    [
      `\`${t.table}\`${t.madeBy ? " ¹" : ""}`,
      t.holds,
      held(t),
      t.tie,
      ...(citus ? [t.citusColocate ? `${t.citus}, with ${t.citusColocate}` : t.citus] : []),
      keyedOwner(t),
      t.erasure,
      t.purge,
    ]
      .map(cell)
      .join(" | "),
  );
  const head = [
    "table",
    "holds",
    "owner data in",
    "tied by",
    ...(citus ? ["Citus"] : []),
    "keyed owner",
    "erasure",
    "purge",
  ];
  return [
    `| ${head.join(" | ")} |`,
    `|${" --- |".repeat(head.length)}`,
    ...rows.map((row) => `| ${row} |`),
  ].join("\n");
}
