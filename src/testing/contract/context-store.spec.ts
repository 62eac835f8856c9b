import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import { hasTransfer, type TransferItem, type TransferRow } from "../../contract/transfer.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, msg, rejectsWithCode, toAsync, withStore } from "./harness.js";

function context(store: SessionStore) {
  assert.ok(hasContextStorage(store), `${store.backend} store has blocks and entries`);
  return store;
}

/** Context-block rows and searchable entries (stores that back auto-wired context blocks). */
export function contextStoreSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("context blocks and entries storage", () => {
    test("blocks: missing is null, empty string is a value, overwrite, delete", () =>
      withStore(target, async (store) => {
        const { blocks } = context(store);
        assert.equal(await blocks.getBlock("memory"), null);
        await blocks.setBlock("memory", "");
        assert.equal(await blocks.getBlock("memory"), "");
        await blocks.setBlock("memory", "likes tea ☕");
        await blocks.setBlock("memory_other", "separate");
        assert.equal(await blocks.getBlock("memory"), "likes tea ☕");
        await blocks.deleteBlocks(["memory", "ghost"]);
        assert.equal(await blocks.getBlock("memory"), null);
        assert.equal(await blocks.getBlock("memory_other"), "separate");
      }));

    test("entries: upsert by key, ranked search, families, per-label, count, delete", () =>
      withStore(target, async (store) => {
        const { entries } = context(store);
        await entries.setEntry("kb", "deploy-guide", "How to deploy the service on Fridays");
        await entries.setEntry("kb", "db", "Database migrations run before deployment");
        await entries.setEntry("other", "x", "deployment notes elsewhere");
        assert.equal(await entries.countEntries("kb"), 2);
        assert.deepEqual((await entries.searchEntries("kb", "deployment")).map((h) => h.key).sort(), [
          "db",
          "deploy-guide",
        ]);
        // Ranked recall: the entry matching both words first, then the one matching one of them.
        assert.deepEqual(
          (await entries.searchEntries("kb", "migration deploy")).map((h) => h.key),
          ["db", "deploy-guide"],
        );
        assert.deepEqual(await entries.searchEntries("kb", "how is the one"), [], "stop words alone");
        assert.deepEqual(await entries.searchEntries("kb", ""), []);
        assert.deepEqual(await entries.searchEntries("kb", 'AND "( *'), []);
        assert.equal((await entries.searchEntries("kb", "deployment", 1000)).length, 2);
        await rejectsWithCode(entries.searchEntries("kb", "deployment", 1001), "INVALID_ARGUMENT", {
          path: "limit",
          rule: "range",
        });
        await entries.setEntry("kb", "db", "Replaced text about backups");
        assert.deepEqual(await entries.searchEntries("kb", "migrations"), []);
        assert.deepEqual(await entries.searchEntries("kb", "backups"), [
          { key: "db", content: "Replaced text about backups" },
        ]);
        assert.equal(await entries.countEntries("kb"), 2);
        await entries.deleteEntries("kb");
        assert.equal(await entries.countEntries("kb"), 0);
        assert.equal(await entries.countEntries("other"), 1);
      }));

    test("content with U+0000 and other control characters round-trips exactly (blocks and entries)", () =>
      withStore(target, async (store) => {
        const { blocks, entries } = context(store);
        const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("");
        const samples = [
          "\u0000",
          `nul\u0000inside\u0000\u0000twice, then every C0 control: ${controls}\u007f\u0085\u2028\u2029 ☕`,
          // Text that already looks like an escaped form must come back as itself, not decoded.
          '"\\u0000 looks escaped"',
          "\\u0000",
        ];
        for (const [i, text] of samples.entries()) {
          await blocks.setBlock(`nul_${i}`, text);
          const back = await blocks.getBlock(`nul_${i}`);
          assert.equal(back, text, `block ${i}`);
          assert.ok(
            back !== null && Buffer.from(back, "utf8").equals(Buffer.from(text, "utf8")),
            `bytes ${i}`,
          );
        }
        await blocks.setBlock("nul_0", "plain again");
        assert.equal(await blocks.getBlock("nul_0"), "plain again", "a plain overwrite of an escaped row");
        await entries.setEntry("kb", "ctl", `zebra\u0000crossing\u0007 ${controls}`);
        assert.deepEqual(await entries.searchEntries("kb", "zebra crossing"), [
          { key: "ctl", content: `zebra\u0000crossing\u0007 ${controls}` },
        ]);
      }));

    test("text with lone surrogates round-trips exactly: blocks, entries, summaries, export and import", () =>
      withStore(target, async (store) => {
        const { blocks, entries } = context(store);
        // Half an emoji, as `text.slice(0, n)` leaves it, and text that merely looks like an escaped form.
        const samples = [
          "half \ud83d",
          "\ude00 the other half",
          "a \udfff b \ud800",
          '"\\ud800"',
          "\ufeff\ud800",
        ];
        for (const [i, text] of samples.entries()) {
          await blocks.setBlock(`lone_${i}`, text);
          assert.equal(await blocks.getBlock(`lone_${i}`), text, `block ${i}`);
          await entries.setEntry("kb", `k${i}`, `zebra ${text}`);
        }
        const hits = await entries.searchEntries("kb", "zebra", 10);
        assert.deepEqual(hits.map((h) => h.content).sort(), samples.map((text) => `zebra ${text}`).sort());
        await blocks.setBlock("lone_0", "well-formed again");
        assert.equal(await blocks.getBlock("lone_0"), "well-formed again");
        const s = store.session("lone");
        await s.appendMessage(msg("m1"));
        await s.appendMessage(msg("m2"));
        await s.appendMessage(msg("m3"));
        const summary = "summary cut mid-emoji \ud83d";
        await s.addCompaction(summary, "m1", "m2");
        assert.equal((await s.getCompactions())[0]?.summary, summary);
        assert.deepEqual((await s.getHistory())[0]?.parts, [{ type: "text", text: summary }]);
        if (!hasTransfer(store)) return;
        const items: TransferItem[] = [];
        for await (const item of store.transfer.exportSession("lone")) items.push(item);
        const compaction = items.find((item) => item.kind === "compaction");
        assert.equal(compaction?.kind === "compaction" ? compaction.compaction.summary : null, summary);
        const rows: TransferRow[] = [];
        for await (const row of store.transfer.exportRows()) rows.push(row);
        const texts = rows.filter((row) => row.kind === "block").map((row) => row.content);
        assert.ok(texts.includes(samples[1]!), "an exported block keeps its lone surrogate");
        await store.transfer.importRows(
          toAsync([
            { kind: "entry", label: "imported", key: "k", content: samples[2]! } satisfies TransferRow,
          ]),
        );
        assert.deepEqual(await entries.searchEntries("imported", "b"), [{ key: "k", content: samples[2] }]);
        await store.transfer.importSession(
          toAsync(
            items.map((item) => {
              if (item.kind === "session") return { ...item, session: { ...item.session, id: "lone-copy" } };
              if (item.kind !== "compaction") return item;
              return { ...item, compaction: { ...item.compaction, id: `copy-${item.compaction.id}` } };
            }),
          ),
        );
        assert.equal((await store.session("lone-copy").getCompactions())[0]?.summary, summary);
      }));
  });
}
