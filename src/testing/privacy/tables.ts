/**
 * The privacy contract's check per declared table (docs/PRIVACY.md, "Where an owner's data is"): the rows each table
 * holds with only the kept session written are the baseline; the owner's session must add rows to every table the
 * declaration ties to a session, a record, a message or a payload (a tied table the suite's session does not reach
 * fails, so a new table gets a write here and an erasure that reaches it), and each erasure path, then the purge, must
 * bring every such table back to its baseline (a delete: but the tables declared `deleteKeeps`).
 *
 * A tied table missing after the seed fails as well, unless the declaration says it is made only by an optional
 * feature (`madeBy`: the change log, the embedder, sqlite-vec) that the target does not list as on (its `features`):
 * a missing table is never taken for a reached one. A table declared `erasureFills` (a queue only an erasure writes,
 * the purge drains) must be there but need not gain rows from the seed. A table tied by owner that holds content (a
 * LangGraph store's items) is counted likewise on the paths that erase the owner (`ownerWide`: eraseOwner, eraseAll),
 * the seed writing the owner's rows there; the other tables tied by owner hold an encrypted owner's key rows, which
 * the contract's stores (no keyring) never write, and the encryption tests erase those.
 */
import assert from "node:assert/strict";
import type { OwnerDataDeclaration, OwnerDataFeature } from "../../store/owner-data.js";

/** The ties whose rows the owner's session writes and its erasure removes. */
const REACHED = new Set(["session", "record", "message", "payload"]);

/** A table to count, and the rows not to (the erasure's own, by a column's value). */
export interface CountedTable {
  table: string;
  except?: Readonly<Record<string, string>>;
}

/** An owner's content kept by owner, not by session: reached by the erasures of the owner only. */
const byOwner = (t: OwnerDataDeclaration[number]) =>
  t.tie === "owner" && Object.values(t.columns).includes("content");

/** The declared tables erasure must reach (`ownerWide`: an erasure of the owner), to count before and after. */
export function erasedTables(declaration: OwnerDataDeclaration, ownerWide = false): CountedTable[] {
  return declaration
    .filter((t) => REACHED.has(t.tie) || (ownerWide && byOwner(t)))
    .map((t) => (t.erasureWrites ? { table: t.table, except: t.erasureWrites } : { table: t.table }));
}

/** How many rows each of `tables` holds, a table that does not exist (one made on first use) left out. */
export type RowCounts = (tables: readonly CountedTable[]) => Promise<Record<string, number>>;

/**
 * The two checks, or undefined when the target gives no declaration; call it once the kept session is written.
 * `features` are the optional features the target's stores have on (a table made by another may be missing);
 * `ownerWide`: the erasure is of the owner, so its tables by owner count too.
 */
export async function tableReach(
  declaration: OwnerDataDeclaration | undefined,
  instance: { rowCounts?: RowCounts | undefined },
  features: readonly OwnerDataFeature[] = [],
  ownerWide = false,
): Promise<{ seeded(): Promise<void>; erased(byDelete: boolean): Promise<void> } | undefined> {
  if (!declaration) return undefined;
  const count = instance.rowCounts;
  assert.ok(count, "a target with a declaration counts its tables' rows (rowCounts)");
  const tables = erasedTables(declaration, ownerWide);
  const baseline = await count(tables);
  const optional = new Set(
    declaration.filter((t) => t.madeBy && !features.includes(t.madeBy)).map((t) => t.table),
  );
  const fills = new Set(declaration.filter((t) => t.erasureFills).map((t) => t.table));
  return {
    seeded: async () => {
      const seeded = await count(tables);
      const names = tables.map((t) => t.table);
      const missing = names.filter((t) => !(t in seeded) && !optional.has(t));
      assert.deepEqual(
        missing,
        [],
        "declared tables the seed did not create (a feature they need is off: declare its madeBy, or list it in the target's features)",
      );
      const unreached = names.filter(
        (t) => t in seeded && !fills.has(t) && !((seeded[t] ?? 0) > (baseline[t] ?? 0)),
      );
      assert.deepEqual(
        unreached,
        [],
        "declared tables the owner's session writes no row to: extend the seed",
      );
    },
    erased: async (byDelete) => {
      const kept = new Set(declaration.filter((t) => byDelete && t.deleteKeeps).map((t) => t.table));
      const left = await count(tables.filter((t) => !kept.has(t.table)));
      const before = Object.fromEntries(Object.keys(left).map((t) => [t, baseline[t] ?? 0]));
      assert.deepEqual(
        left,
        before,
        "rows per declared table after the erasure and purge, against the baseline",
      );
    },
  };
}

/** Whether a delete leaves, by the declaration, rows of the session somewhere (then its overlay's summary). */
export function deleteKeepsSummary(declaration: OwnerDataDeclaration | undefined): boolean {
  return declaration?.some((t) => t.deleteKeeps !== undefined) ?? false;
}
