// The keyed blind index on PostgreSQL and PGlite: an encrypted owner's messages are found by their words (families,
// phrases, forms, CJK) in the same ranked order as the same data in clear, with no plaintext word in any page of the
// store's relations (the search column and its GIN index included); another owner's key matches nothing of theirs;
// a wrong or missing key is DECRYPT_FAILED; an edit is indexed again; erasure and a purge leave none of its tokens.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pageinspect } from "@electric-sql/pglite/contrib/pageinspect";
import type { SearchHit, StoreSearchOptions } from "../src/contract/search.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { blindTokensOf } from "../src/search/blind-tokens.js";
import type { PostgresSource } from "../src/sql/engines/postgres/client.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { msg } from "../src/testing/contract/harness.js";
import { ownDatabasePool } from "./fixtures/own-database.js";
import { newPGlite } from "./fixtures/pglite.js";
import { dropSchema, pgliteSwitchedOff, postgresUnavailable, type Runner } from "./fixtures/postgres-db.js";
import { answers, SCOPES, seedTexts } from "./helpers/blind-search.js";
import { randomKeyring, SECRET } from "./helpers/encryption.js";
import { markersInRelations, purgeUntilComplete, total } from "./helpers/purge.js";

/** A database the tests open stores in (each in a schema of its own), and how to let it go. */
interface Database {
  db: PostgresSource & Runner;
  /** A schema name no other test file uses. */
  schema(name: string): string;
  close(): Promise<void>;
}

/** The queries of answers() with their hits' ids, without scores. */
const order = (answer: unknown[]) =>
  answer.map((a) => [(a as unknown[])[0], ((a as unknown[])[1] as unknown[][]).map((hit) => hit[0])]);

/** The tests, run on the server and on PGlite. */
function blindIndexTests(label: string, open: () => Promise<Database>) {
  // Stores opened by a test, closed (and their schemas dropped) when it ends.
  async function withStores(
    run: (use: (name: string, keyring?: Keyring) => Promise<PostgresStore>, d: Database) => Promise<void>,
  ) {
    const d = await open();
    const opened: [PostgresStore, string][] = [];
    try {
      await run(async (name, keyring) => {
        const schema = d.schema(name);
        await dropSchema(d.db, schema);
        const store = await PostgresStore.open(d.db, { schema, ...(keyring ? { keyring } : {}) });
        opened.push([store, schema]);
        return store;
      }, d);
    } finally {
      for (const [store, schema] of opened) {
        await store.close();
        await dropSchema(d.db, schema);
      }
      await d.close();
    }
  }

  test(`${label}: an encrypted owner is found by its words, ranked as the same data in clear; no word in any page`, async () => {
    await withStores(async (use, d) => {
      const clear = await use("clear");
      const sealed = await use("sealed", randomKeyring(["alice", "carol"]));
      const clearIds = (await seedTexts(clear)).ids;
      const sealedIds = (await seedTexts(sealed)).ids;
      // Ranked recall weighs a term by its matches in the search's scope, and every word required ranks by ts_rank,
      // which counts nothing beyond the message: the same with two owners in the store. ts_rank of a query of
      // alternatives (one word, no scope lexeme: named sessions) divides by their number, a factor for all hits.
      for (const scope of SCOPES) {
        for (const match of ["any", "all"] as const) {
          const expected = await answers(clear, scope, clearIds, match);
          const found = await answers(sealed, scope, sealedIds, match);
          if (match === "all" && scope === SCOPES[2]) assert.deepEqual(order(found), order(expected));
          else assert.deepEqual(found, expected);
        }
      }
      // The queries do find things (the comparison is not of two empty lists).
      assert.equal((await sealed.searchMessages(SECRET, { owner: "alice" })).length, 2);
      assert.equal((await sealed.searchMessages("deploy", { sessionId: sealedIds[0]! })).length, 3);
      const [hit] = await sealed.searchMessages("rotates", { owner: "alice", match: "all" });
      assert.equal(hit?.id, "alice6");
      assert.match(JSON.stringify(hit), /rotates every week/, "hits are read from the opened content");
      // A store-wide search hashes for no owner: it finds text in clear only.
      assert.equal((await sealed.searchMessages(SECRET)).length, 0);
      // A time asked lifts its turns as in clear: "tomorrow" said on 4 May is the 5 May asked.
      const [deploy] = await sealed.searchMessages("deploy on 5 May 2023", { sessionId: sealedIds[0]! });
      assert.equal(deploy?.id, "alice3");
      await d.db.query("CHECKPOINT");
      const schema = d.schema("sealed");
      for (const word of [SECRET, "deployment", "apples", "rotates", "机器", "xdtd20230505"])
        assert.equal(total(await markersInRelations(d.db, schema, word)), 0, `no "${word}" in any page`);
      // The check reads what it should: the clear store's words are in its pages.
      assert.ok(total(await markersInRelations(d.db, d.schema("clear"), "deployment")) > 0);
    });
  });

  test(`${label}: another owner's key matches nothing of an encrypted owner's`, async () => {
    await withStores(async (use) => {
      const keyring = randomKeyring(["alice", "carol"]);
      const store = await use("owners", keyring);
      const { ids } = await seedTexts(store);
      const owners = (hits: SearchHit[]) => new Set(hits.map((h) => h.id.replace(/\d+$/, "")));
      assert.deepEqual(owners(await store.searchMessages("apple", { owner: "carol" })), new Set(["carol"]));
      assert.deepEqual(
        owners(await store.searchMessages("apple", { sessionId: ids[0]! })),
        new Set(["alice"]),
      );
      assert.deepEqual(
        owners(await store.searchMessages("apple", { sessionIds: ids })),
        new Set(["alice", "carol"]),
      );
      // An owner without a key, in clear in the same store, is found by its words as before, beside a keyed one.
      const dave = (await SessionManager.create(store).create("dave chat", { owner: "dave" })).id;
      await store.session(dave).appendMessage(msg("dave0", "dave likes apples"));
      for (const match of ["any", "all"] as const) {
        assert.deepEqual(
          owners(await store.searchMessages("apple", { owner: "dave", match })),
          new Set(["dave"]),
        );
        const both = await store.searchMessages("apple", { sessionIds: [ids[0]!, dave], match });
        assert.deepEqual(owners(both), new Set(["alice", "dave"]));
        assert.deepEqual(
          owners(await store.searchMessages("apple", { match })),
          new Set(["dave"]),
          "store-wide",
        );
      }
      // Alice's token of the secret, looked up as a word in carol's scope (or alice's), finds nothing.
      const token = blindTokensOf(keyring.keys.get("alice")!).word(SECRET);
      for (const owner of ["carol", "alice"])
        for (const match of ["any", "all"] as const)
          assert.deepEqual(await store.searchMessages(token, { owner, match }), []);
      assert.deepEqual(await store.searchMessages(`${token} apples`, { owner: "alice", match: "all" }), []);
      assert.equal((await store.searchMessages("\uE000", { owner: "alice" })).length, 0);
    });
  });

  test(`${label}: a search of an encrypted owner with a wrong or missing key is DECRYPT_FAILED`, async () => {
    await withStores(async (use, d) => {
      const store = await use("wrong", randomKeyring(["alice", "carol"]));
      const { ids } = await seedTexts(store);
      for (const keyring of [randomKeyring(["alice", "carol"]), randomKeyring([])]) {
        const other = await PostgresStore.open(d.db, { schema: d.schema("wrong"), keyring });
        try {
          for (const match of ["any", "all"] as const) {
            await assert.rejects(other.searchMessages("apple", { owner: "alice", match }), {
              code: "DECRYPT_FAILED",
            });
            await assert.rejects(other.searchMessages("apple", { sessionId: ids[0]!, match }), {
              code: "DECRYPT_FAILED",
            });
            await assert.rejects(other.searchMessages("apple", { sessionIds: ids, match }), {
              code: "DECRYPT_FAILED",
            });
          }
        } finally {
          await other.close();
        }
      }
    });
  });

  test(`${label}: an edited encrypted message is found by its new words; erasing and purging the owner leaves no token`, async () => {
    await withStores(async (use, d) => {
      const keyring = randomKeyring(["alice", "carol"]);
      const store = await use("edit", keyring);
      const { ids, manager } = await seedTexts(store);
      assert.equal((await store.searchMessages("rotates", { owner: "alice" })).length, 1, "indexed");
      await store.session(ids[0]!).updateMessage(msg("alice6", "The wombat sleeps all afternoon"));
      for (const match of ["any", "all"] as const) {
        const found = await store.searchMessages("wombat", { owner: "alice", match });
        assert.deepEqual(
          found.map((h) => h.id),
          ["alice6"],
        );
        assert.equal((await store.searchMessages("rotates", { owner: "alice", match })).length, 0);
      }
      const schema = d.schema("edit");
      const blind = blindTokensOf(keyring.keys.get("alice")!);
      const token = blind.word(SECRET);
      // A long message's blind tokens (~2× its words' bytes) stay in its row, where every search reads them, while
      // its sealed content goes to TOAST (schema step 22).
      // Words of random letters: their tokens share no segments, so they do not compress.
      const long = Array.from({ length: 120 }, () =>
        Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => String.fromCharCode(97 + (b % 26))).join(
          "",
        ),
      );
      await store.session(ids[0]!).appendMessage(msg("alice-long", `${long.join(" ")} ${SECRET}`));
      await d.db.query("CHECKPOINT");
      const pages = await markersInRelations(d.db, schema, blind.word(long[119]!));
      const toast = Object.entries(pages).filter(
        ([relation, n]) => n > 0 && relation.startsWith("pg_toast."),
      );
      assert.deepEqual([pages[`${schema}.agent_messages`]! > 0, toast], [true, []], JSON.stringify(pages));
      assert.ok(total(await markersInRelations(d.db, schema, token)) > 0, "the token is in the pages");
      await manager.eraseOwner("alice");
      const left = await store.searchMessages(SECRET, { sessionIds: ids });
      assert.deepEqual(left.map((h) => h.id).sort(), ["carol0", "carol6"], "alice's are gone, carol's stay");
      await purgeUntilComplete(() => store.purge());
      assert.equal(total(await markersInRelations(d.db, schema, token)), 0, "and no more after the purge");
    });
  });

  test(`${label}: a search may span at most 16 owners with a key`, async () => {
    await withStores(async (use) => {
      const owners = Array.from({ length: 17 }, (_, i) => `owner${i}`);
      const store = await use("many", randomKeyring(owners));
      const manager = SessionManager.create(store);
      const ids: string[] = [];
      for (const owner of owners) {
        const { id } = await manager.create(owner, { owner });
        await manager.append(id, msg(`${owner}-m`, `a note of ${owner}`));
        ids.push(id);
      }
      await assert.rejects(store.searchMessages("note", { sessionIds: ids }), {
        code: "INVALID_ARGUMENT",
        issues: [{ path: "sessionIds", rule: "range" }],
      });
      assert.equal((await store.searchMessages("note", { sessionIds: ids.slice(1), limit: 20 })).length, 16);
    });
  });
}

const unavailable = await postgresUnavailable();
if (unavailable) console.log(`Skipping the PostgreSQL server blind-index tests: ${unavailable}`);
// A database of its own: other test files' transactions do not hold its purges back.
const pool = await ownDatabasePool("blind_index", unavailable);

describe("blind index on the PostgreSQL server", { skip: unavailable ?? false }, () => {
  blindIndexTests("server", async () => ({
    db: pool!,
    schema: (name) => `agent_session_blind_${name}_${process.pid}`,
    close: async () => undefined,
  }));
});

describe("blind index on PGlite", { skip: pgliteSwitchedOff() ?? false }, () => {
  blindIndexTests("PGlite", async () => {
    const db = await newPGlite({ extensions: { pageinspect } });
    return { db, schema: (name) => `blind_${name}`, close: () => db.close() };
  });
});

test("PGlite: a search of a known encrypted owner takes no more statements than one in clear", {
  skip: pgliteSwitchedOff() ?? false,
}, async () => {
  const db = await newPGlite();
  const clear = await PostgresStore.open(db, { schema: "counted_clear" });
  const sealed = await PostgresStore.open(db, { schema: "counted", keyring: randomKeyring(["alice"]) });
  try {
    const ids = {
      clear: (await seedTexts(clear, ["alice"])).ids,
      sealed: (await seedTexts(sealed, ["alice"])).ids,
    };
    // Counts what reaches the engine from here on (PGlite's query and exec are what the store calls).
    let statements = 0;
    for (const method of ["query", "exec"] as const) {
      const original = db[method].bind(db) as (...args: unknown[]) => Promise<unknown>;
      (db as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        statements++;
        return original(...args);
      };
    }
    const cost = async (store: PostgresStore, options: StoreSearchOptions) => {
      const before = statements;
      assert.ok((await store.searchMessages("deploy", options)).length > 0);
      return statements - before;
    };
    for (const match of ["any", "all"] as const) {
      for (const scope of [(id: string) => ({ sessionId: id }), () => ({ owner: "alice" })]) {
        // A store without a keyring reads the owner's key check too (not cached while there is none: another
        // process may record one), so that it refuses an owner with encrypted content rather than find nothing.
        const inClear = await cost(clear, { ...scope(ids.clear[0]!), match });
        const sealedCost = await cost(sealed, { ...scope(ids.sealed[0]!), match });
        assert.ok(
          sealedCost <= inClear && inClear <= sealedCost + 1,
          `${JSON.stringify(scope("s"))}: ${sealedCost} ${inClear}`,
        );
      }
    }
  } finally {
    await clear.close();
    await sealed.close();
    await db.close();
  }
});
