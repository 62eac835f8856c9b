import assert from "node:assert/strict";
import { hasContextStorage } from "../../contract/context.js";
import type { SessionStore } from "../../contract/store.js";
import type { Suite } from "../runner.js";
import { type ContractTarget, ids, msg, rejectsWithCode, withStore } from "./harness.js";

// A conversation as LoCoMo's are stored: "<speaker>: <text>", the second speaker as the assistant.
const TURNS: [id: string, role: string, text: string][] = [
  ["t1", "user", "Caroline: Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful."],
  ["t2", "assistant", "Melanie: Wow, that sounds amazing. What happened there?"],
  ["t3", "user", "Caroline: The transgender stories were inspiring. I felt accepted."],
  ["t4", "assistant", "Melanie: I painted a sunrise last weekend, my kids loved it."],
  ["t5", "user", "Caroline: I am researching adoption agencies, I want to be a mom."],
  ["t6", "assistant", "Melanie: That is wonderful news about adoption!"],
  ["t7", "user", "Caroline: My group meets every Tuesday evening."],
];

async function seed(store: SessionStore, sessionId = "c"): Promise<void> {
  const s = store.session(sessionId);
  for (const [id, role, text] of TURNS) await s.appendMessage(msg(id, text, role));
}

/** Ranked recall, the default search: questions as a model asks them, context, filters, overlays. */
export function recallSpec({ describe, test }: Suite, target: ContractTarget): void {
  describe("ranked recall", () => {
    test("a question as written finds its answer; messages matching more of its words rank first", () =>
      withStore(target, async (store) => {
        await seed(store);
        const hits = await store.searchMessages("When did Caroline go to the LGBTQ support group?", {
          sessionId: "c",
        });
        assert.equal(hits[0]?.id, "t1");
        // Every candidate matches a content word; stop words ("when", "did", "the") found nothing by themselves.
        assert.ok(!ids(hits).includes("t4") && !ids(hits).includes("t6"), ids(hits).join());
        assert.ok(hits.every((h) => typeof h.score === "number" && h.score > 0));
        assert.deepEqual(await store.searchMessages("what did you do there?", { sessionId: "c" }), []);
        assert.deepEqual(await store.searchMessages("When did Caroline go?", { match: "all" }), []);
      }));

    test("a word finds its irregular forms (go finds went) and a short word its inflections (dog finds dogs)", () =>
      withStore(target, async (store) => {
        const s = store.session("f");
        await s.appendMessage(msg("f1", "I bought new running shoes at the mall."));
        await s.appendMessage(msg("f2", "We went camping by the lake.", "assistant"));
        await s.appendMessage(msg("f3", "The children met their new teacher."));
        await s.appendMessage(msg("f4", "Going to buy milk later.", "assistant"));
        await s.appendMessage(msg("f5", "Our dogs tried the trail.", "assistant"));
        const find = async (query: string, match?: "all") =>
          ids(await store.searchMessages(query, { sessionId: "f", ...(match ? { match } : {}) }));
        assert.equal((await find("When did Melanie go camping?"))[0], "f2");
        assert.deepEqual((await find("What did she buy?")).sort(), ["f1", "f4"]);
        assert.deepEqual(await find("Who did the child meet?"), ["f3"]);
        assert.deepEqual(await find("buy shoes", "all"), ["f1"]);
        assert.deepEqual(await find("going lake", "all"), ["f2"]);
        assert.deepEqual(await find("Did the dog try it?"), ["f5"]);
        assert.deepEqual(await find("dog try", "all"), ["f5"]);
        // A phrase is matched as written.
        assert.deepEqual(await find('"went camping"'), ["f2"]);
        assert.deepEqual(await find('"go camping"'), []);
        assert.ok(hasContextStorage(store), `${store.backend} store has entries`);
        await store.entries.setEntry("kb", "trip", "We drove to the coast and swam.");
        await store.entries.setEntry("kb", "food", "Pasta with tomatoes.");
        assert.deepEqual(
          (await store.entries.searchEntries("kb", "Where did we drive?")).map((h) => h.key),
          ["trip"],
        );
      }));

    test("stop words alone never make a hit; a quoted phrase still counts its every word", () =>
      withStore(target, async (store) => {
        await seed(store);
        assert.deepEqual(await store.searchMessages("is it the one that was there"), []);
        assert.deepEqual(ids(await store.searchMessages('"every Tuesday"')), ["t7"]);
        const phrase = await store.searchMessages('"support group" adoption');
        assert.deepEqual(ids(phrase).sort(), ["t1", "t5", "t6"]);
      }));

    test("a question in German or Spanish drops its own function words, and they alone find nothing", () =>
      withStore(target, async (store) => {
        const s = store.session("de");
        await s.appendMessage(
          msg("d1", "Caroline: Ich war gestern bei der Selbsthilfegruppe, es war so stark."),
        );
        await s.appendMessage(
          msg("d2", "Melanie: Was ist denn da passiert? Ist das die Gruppe am Dienstag?", "assistant"),
        );
        await s.appendMessage(msg("d3", "Caroline: Ich habe ein Bild für die Ausstellung gemalt."));
        await s.appendMessage(msg("e1", "Caroline: Fui al grupo de apoyo y fue muy especial.", "assistant"));
        // "wann", "ist", "zur" are German function words: only the content words take part.
        const german = await store.searchMessages("Wann ist Caroline zur Selbsthilfegruppe gegangen?", {
          sessionId: "de",
        });
        assert.equal(german[0]?.id, "d1");
        assert.ok(!ids(german).includes("d2"), ids(german).join());
        assert.deepEqual(await store.searchMessages("Was ist das, was war da?", { sessionId: "de" }), []);
        const spanish = await store.searchMessages("¿Cuándo fue Caroline al grupo de apoyo?", {
          sessionId: "de",
        });
        assert.equal(spanish[0]?.id, "e1");
        assert.deepEqual(await store.searchMessages("¿Qué es lo que fue?", { sessionId: "de" }), []);
      }));

    test("a turn next to a match ranks above an equal match elsewhere", () =>
      withStore(target, async (store) => {
        const s = store.session("n");
        await s.appendMessage(msg("q", "Where do you keep the spare keys?"));
        await s.appendMessage(msg("a", "In the blue drawer under the spare towels", "assistant"));
        await s.appendMessage(msg("y", "Keys are on the table"));
        await s.appendMessage(msg("x", "We bought new towels", "assistant"));
        const hits = await store.searchMessages("spare towels", { sessionId: "n" });
        assert.equal(hits[0]?.id, "a");
        // "x" and "q" each match one word; "q" sits next to the best match and carries part of its weight.
        assert.ok(ids(hits).indexOf("q") < ids(hits).indexOf("x"), ids(hits).join());
      }));

    test("an exchange pools its terms through turns that match; a turn that matches nothing joins nothing", () =>
      withStore(target, async (store) => {
        const s = store.session("e");
        // A question, its answer and the reply to that answer, each holding one of the words asked for.
        await s.appendMessage(msg("ask", "Which of the trains go out to the coast this week?"));
        await s.appendMessage(msg("answer", "The early morning one stops right at the harbour", "assistant"));
        await s.appendMessage(msg("thanks", "Lovely, and the ferry leaves from there in the afternoon"));
        await s.appendMessage(msg("pause", "Sounds good to me", "assistant"));
        // Two short adjacent turns holding two of the words: more relevant than the exchange's long ones.
        await s.appendMessage(msg("pair1", "Harbour busy"));
        await s.appendMessage(msg("pair2", "Ferry late", "assistant"));
        const hits = ids(await store.searchMessages("trains harbour ferry", { sessionId: "e" }));
        // "ask" and "thanks" are two turns apart, joined through "answer": all three words in one exchange.
        assert.deepEqual(hits.slice(0, 3).sort(), ["answer", "ask", "thanks"], hits.join());
        assert.deepEqual(hits.slice(3).sort(), ["pair1", "pair2"], hits.join());

        const g = store.session("g");
        // Two short turns with a turn between them that matches nothing; apart from them, two long adjacent ones.
        await g.appendMessage(msg("gap1", "Trains late"));
        await g.appendMessage(msg("gap2", "Nothing else to report", "assistant"));
        await g.appendMessage(msg("gap3", "Ferry full"));
        await g.appendMessage(msg("pause", "Sounds good to me", "assistant"));
        await g.appendMessage(msg("long1", "The trains were packed this morning, every single carriage"));
        await g.appendMessage(
          msg("long2", "And the ferry was no better, there were people everywhere", "assistant"),
        );
        const apart = ids(await store.searchMessages("trains ferry", { sessionId: "g" }));
        // "gap1" and "gap3" are not joined through "gap2": the adjacent pair, though longer, ranks first.
        assert.deepEqual(apart.slice(0, 2).sort(), ["long1", "long2"], apart.join());
      }));

    test("context: the turns around each hit, oldest first, along its branch", () =>
      withStore(target, async (store) => {
        await seed(store);
        const [hit] = await store.searchMessages("adoption agencies", {
          sessionId: "c",
          context: 2,
          limit: 1,
        });
        assert.equal(hit?.id, "t5");
        assert.deepEqual(ids(hit?.context?.before ?? []), ["t3", "t4"]);
        assert.deepEqual(ids(hit?.context?.after ?? []), ["t6", "t7"]);
        assert.equal(hit?.context?.after[0]?.role, "assistant");
        assert.match(hit?.context?.after[0]?.content ?? "", /wonderful news/);
        const [first] = await store.searchMessages("LGBTQ", { context: 3 });
        assert.deepEqual(ids(first?.context?.before ?? []), []);
        assert.deepEqual(ids(first?.context?.after ?? []), ["t2", "t3", "t4"]);
        const [plain] = await store.searchMessages("LGBTQ");
        assert.equal(plain?.context, undefined);
      }));

    test("a sibling branch never leaks into an active-branch search: not as a hit, not as context", () =>
      withStore(target, async (store) => {
        const s = store.session("b");
        await s.appendMessage(msg("r", "Planning the garden party"));
        await s.appendMessage(msg("old", "The garden party secret is tulips", "assistant"), "r");
        await s.appendMessage(msg("new", "Let us plan the garden party menu", "assistant"), "r");
        await s.appendMessage(msg("next", "Lemonade for the party"), "new");
        const active = await store.searchMessages("garden party secret", {
          sessionId: "b",
          branch: "active",
          context: 2,
        });
        assert.ok(!ids(active).includes("old"));
        for (const hit of active) {
          const around = [...(hit.context?.before ?? []), ...(hit.context?.after ?? [])];
          assert.ok(!ids(around).includes("old"), `${hit.id}: ${ids(around).join()}`);
        }
        const [root] = active.filter((h) => h.id === "r");
        assert.deepEqual(ids(root?.context?.after ?? []), ["new", "next"]);
        const all = await store.searchMessages("garden party secret", { sessionId: "b" });
        assert.equal(all[0]?.id, "old");
        assert.equal(all[0]?.onActivePath, false);
      }));

    test("filters: role, time range and a set of sessions", () =>
      withStore(target, async (store) => {
        await seed(store, "c");
        await seed(store, "d");
        await store.session("e").appendMessage(msg("e1", "Caroline adoption support"));
        const users = await store.searchMessages("adoption support", { role: "user", sessionId: "c" });
        assert.ok(users.length > 0 && users.every((h) => h.role === "user"), ids(users).join());
        const both = await store.searchMessages("adoption", { role: ["user", "assistant"], sessionId: "c" });
        assert.deepEqual(ids(both).sort(), ["t5", "t6"]);
        const some = await store.searchMessages("adoption", { sessionIds: ["d", "e"] });
        assert.deepEqual(new Set(some.map((h) => h.sessionId)), new Set(["d", "e"]));
        assert.deepEqual(await store.searchMessages("adoption", { sessionIds: [] }), []);
        assert.deepEqual(await store.searchMessages("adoption", { sessionId: "c", sessionIds: ["d"] }), []);
        const future = new Date(Date.now() + 60_000);
        assert.deepEqual(await store.searchMessages("adoption", { since: future }), []);
        assert.equal((await store.searchMessages("adoption", { until: future.toISOString() })).length, 5);
        assert.deepEqual(await store.searchMessages("adoption", { until: "2000-01-01T00:00:00Z" }), []);
        for (const match of ["any", "all"] as const) {
          const filtered = await store.searchMessages("adoption", {
            match,
            role: "assistant",
            sessionIds: ["c"],
          });
          assert.deepEqual(ids(filtered), ["t6"], match);
        }
      }));

    test("a hit inside a compacted range is found and names the overlay that covers it", () =>
      withStore(target, async (store) => {
        await seed(store);
        await seed(store, "d");
        const s = store.session("c");
        const before = await store.searchMessages("adoption transgender", { sessionId: "c" });
        assert.ok(before.length > 0 && before.every((h) => h.compactedBy === undefined));
        const overlay = await s.addCompaction("Caroline talked about support and adoption.", "t2", "t5");
        const hits = await store.searchMessages("adoption transgender", { sessionId: "c" });
        const byId = new Map(hits.map((h) => [h.id, h]));
        assert.equal(byId.get("t3")?.compactedBy, overlay.id);
        assert.equal(byId.get("t5")?.compactedBy, overlay.id);
        assert.equal(byId.get("t6")?.compactedBy, undefined);
        // Across sessions, only the hits of the session with the overlay are marked.
        const wide = await store.searchMessages("adoption transgender", { limit: 20 });
        const marked = wide.filter((h) => h.compactedBy !== undefined);
        assert.deepEqual(new Set(wide.map((h) => h.sessionId)), new Set(["c", "d"]));
        assert.ok(
          marked.length > 0 && marked.every((h) => h.sessionId === "c" && h.compactedBy === overlay.id),
        );
        const all = await store.searchMessages("transgender", { match: "all" });
        assert.equal(all.find((h) => h.sessionId === "c")?.compactedBy, overlay.id);
        assert.equal(all.find((h) => h.sessionId === "d")?.compactedBy, undefined);
      }));

    test("bad options are INVALID_ARGUMENT; a long query of common words stays bounded", () =>
      withStore(target, async (store) => {
        await seed(store);
        for (const options of [
          { match: "some" },
          { role: 5 },
          { role: [] },
          { since: "not a time" },
          { until: Number.NaN },
          { context: 11 },
          { context: -1 },
          { sessionIds: "c" },
          { sessionId: 5 },
          { sessionId: null },
          { sessionId: ["c"] },
          { sessionId: {} },
        ]) {
          await rejectsWithCode(store.searchMessages("adoption", options as never), "INVALID_ARGUMENT");
        }
        const many = Array.from({ length: 30 }, (_, i) => `caroline${i === 0 ? "" : i} group`).join(" ");
        const hits = await store.searchMessages(many, { limit: 3 });
        assert.ok(hits.length <= 3 && hits.length > 0);
      }));

    test("a short page is the first hits of the whole ranking, in its order", () =>
      withStore(target, async (store) => {
        // Two sessions of chained turns over a few words, so candidates tie on term counts, neighbours and weights;
        // backends rank only a page's worth in order where no filter can thin it (first-in-order.ts).
        const words = ["amber", "birch", "cedar", "delta", "ember"];
        for (const sessionId of ["p", "q"]) {
          const s = store.session(sessionId);
          for (let i = 0; i < 48; i++) {
            // Word w in every turn whose number has bit w set: each word in half the turns, in every combination.
            const text = words.filter((_, w) => (i >> w) & 1).join(" ");
            await s.appendMessage(msg(`${sessionId}${i}`, `${text} turn`));
          }
        }
        for (const query of ["amber birch", "cedar delta ember", "birch", "amber cedar ember turn"]) {
          for (const scope of [{ sessionId: "p" }, {}]) {
            const whole = ids(await store.searchMessages(query, { ...scope, limit: 1000 }));
            assert.ok(whole.length > 20, `${query}: ${whole.length} candidates`);
            for (const limit of [1, 3, 7, 20]) {
              const page = ids(await store.searchMessages(query, { ...scope, limit }));
              assert.deepEqual(page, whole.slice(0, limit), `${query}, limit ${limit}`);
            }
          }
        }
      }));
  });
}
