// Encryption at rest against clear (docs/PRIVACY.md, "Measured"): an owner in a store without a keyring and an owner
// with a key in a store with one, written and searched interleaved so the machine's load falls on both alike. Append p50 of one message
// after the tip and owner-scoped search p50 (the keyed blind index, on SQLite and Postgres). The targets of the
// encryption issue are 1.3× clear. Part of `npm run bench` (BENCH_ONLY=encryption; BENCH_SCALE shrinks the
// counts); standalone: `npm run bench:script bench/encryption.ts`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { RegistryCapableStore } from "../src/contract/registry.js";
import { SessionManager } from "../src/manager/manager.js";
import { PostgresStore } from "../src/postgres/index.js";
import { SqliteStore } from "../src/sqlite/store.js";
import type { Keyring } from "../src/store/crypto/keyring.js";
import { BENCH_PG_URL } from "./pg-url.js";
import { fmtDur, mdTable, summarize, timeUs } from "./stats.js";

const WORDS = "deploy server budget meeting travel doctor invoice garden recipe backup concert visa".split(
  " ",
);
const text = (i: number) =>
  `note ${i}: ${Array.from({ length: 40 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(" ")}`;

/** Messages of ~40 words and two-word searches of them. */
interface Corpus {
  text(i: number): string;
  query(q: number): string;
}

/** Every message holds every word: a search ranks all of the owner's messages. */
const REPEATED: Corpus = {
  text,
  query: (q) => `${WORDS[q % WORDS.length]} ${WORDS[(q * 5 + 1) % WORDS.length]}`,
};

// 300 made-up words of three syllables, 40 of them drawn (a fixed pseudo-random sequence) for each message: a
// word is in ~13 % of the messages, so a search ranks a few hundred of 1,000 and reads 20.
const SYLLABLES = "ka lo mer tin su dra pel vo ris gan".split(" ");
const VOCABULARY = Array.from(
  { length: 300 },
  (_, i) => SYLLABLES[i % 10]! + SYLLABLES[Math.floor(i / 10) % 10]! + SYLLABLES[Math.floor(i / 100)]!,
);
const draw = (n: number) => VOCABULARY[((n * 2_654_435_761) % 4_294_967_296) % VOCABULARY.length]!;
const VARIED: Corpus = {
  text: (i) => Array.from({ length: 40 }, (_, w) => draw(i * 40 + w)).join(" "),
  query: (q) => `${draw(q * 2 + 7)} ${draw(q * 2 + 8)}`,
};

const keyring = (): Keyring => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  return { key: (owner) => (owner === "sealed" || owner === "varied" ? key : undefined) };
};

/**
 * Append and search p50 of `sealedOwner` in a store without a keyring and in one with a keyring (which has a key
 * for "sealed" only), interleaved.
 */
async function measure(
  stores: { clear: RegistryCapableStore; sealed: RegistryCapableStore },
  appends: number,
  searches: number,
  sealedOwner = "sealed",
  corpus = REPEATED,
) {
  const managers = {
    clear: SessionManager.create(stores.clear),
    sealed: SessionManager.create(stores.sealed),
  };
  const ids = {
    clear: (await managers.clear.create("clear", { owner: sealedOwner })).id,
    sealed: (await managers.sealed.create(sealedOwner, { owner: sealedOwner })).id,
  };
  const samples = { clear: [] as number[], sealed: [] as number[] };
  const found = { clear: [] as number[], sealed: [] as number[] };
  for (let i = 0; i < appends; i++) {
    for (const who of ["clear", "sealed"] as const) {
      const message = {
        id: `${who}-${sealedOwner}-${i}`,
        role: "user",
        parts: [{ type: "text" as const, text: corpus.text(i) }],
      };
      samples[who].push(await timeUs(() => stores[who].session(ids[who]).appendMessage(message)));
    }
  }
  for (let q = 0; q < searches; q++) {
    const query = corpus.query(q);
    for (const who of ["clear", "sealed"] as const) {
      found[who].push(await timeUs(() => managers[who].forOwner(sealedOwner).search(query, { limit: 20 })));
    }
  }
  return { append: [samples.clear, samples.sealed], search: [found.clear, found.sealed] } as const;
}

function rowsOf(backend: string, result: Awaited<ReturnType<typeof measure>>): string[][] {
  const row = (what: string, [clear, sealed]: readonly number[][]) => {
    const [c, s] = [summarize(clear!).p50, summarize(sealed!).p50];
    return [backend, what, fmtDur(c), fmtDur(s), `${(s / c).toFixed(2)}×`];
  };
  return [row("append after the tip", result.append), row("search by owner (blind index)", result.search)];
}

/** The encryption table (a Postgres row that cannot connect says why instead). */
export async function benchEncryption(scale = 1): Promise<string> {
  const appends = Math.max(50, Math.round(1000 * Math.min(1, scale)));
  const searches = Math.max(20, Math.round(200 * Math.min(1, scale)));
  const rows: string[][] = [];
  const dir = mkdtempSync(join(tmpdir(), "agent-session-encryption-bench-"));
  try {
    const clear = new SqliteStore(join(dir, "clear.db"));
    const sealed = new SqliteStore(join(dir, "sealed.db"), { keyring: keyring() });
    rows.push(...rowsOf("SQLite (file)", await measure({ clear, sealed }, appends, searches)));
    await Promise.all([clear.close(), sealed.close()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: 4 });
  const schema = `agent_session_encryption_bench_${process.pid}`;
  try {
    for (const name of [schema, `${schema}_clear`]) await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    const clear = await PostgresStore.open(pool, { schema: `${schema}_clear` });
    const sealed = await PostgresStore.open(pool, { schema, keyring: keyring() });
    const pgAppends = Math.min(appends, 300);
    rows.push(...rowsOf("Postgres", await measure({ clear, sealed }, pgAppends, searches)));
    // Words drawn from a vocabulary (VARIED): a search ranks a few hundred of the owner's 1,000 messages, and its
    // candidates' search vectors (blind tokens ~2× a word's bytes) are what it reads most.
    const varied = await measure({ clear, sealed }, appends, searches, "varied", VARIED);
    rows.push(
      rowsOf("Postgres", varied)[1]!.map((cell, i) =>
        i === 1 ? "search by owner, 300-word vocabulary" : cell,
      ),
    );
    // An owner without a key in a keyring store is stored in clear, but each append looks its key check up (another
    // process may give the owner a key): the cost of opening a store with a keyring for owners who have none.
    const keyless = await measure({ clear, sealed }, pgAppends, 1, "keyless");
    rows.push(
      rowsOf("Postgres", keyless)[0]!.map((cell, i) => (i === 1 ? "append, owner without a key" : cell)),
    );
    await Promise.all([clear.close(), sealed.close()]);
  } catch (error) {
    rows.push([
      "Postgres",
      `skipped: ${error instanceof Error ? error.message : String(error)}`,
      "–",
      "–",
      "–",
    ]);
  } finally {
    for (const name of [schema, `${schema}_clear`]) {
      await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`).catch(() => undefined);
    }
    await pool.end();
  }
  return [
    "## Encryption at rest: an owner with a key against one without",
    "",
    `A store without a keyring (clear) beside one with the owner's key (sealed), same owner; ${appends} appends of a ~40-word message to each owner's session, then ` +
      `${searches} two-word searches kept to the owner, interleaved. Target: sealed ≤ 1.3× clear.`,
    "",
    mdTable(["backend", "operation", "clear p50", "sealed p50", "sealed / clear"], rows),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchEncryption(Number(process.env.BENCH_SCALE ?? "1")));
}
