// Encryption at rest against clear (docs/PRIVACY.md, "Measured"): an owner in a store without a keyring and an owner
// with a key in a store with one, written and searched interleaved so the machine's load falls on both alike. Append p50 of one message
// after the tip and owner-scoped search p50 (the keyed blind index, on SQLite and Postgres). The targets of the
// encryption issue are 1.3× clear. Then a key rotation of 10,000 sealed messages (total, messages/s, slowest
// batch). Part of `npm run bench` (BENCH_ONLY=encryption; BENCH_SCALE shrinks the
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
import { fmtDur, mdTable, nowUs, summarize, timeUs } from "./stats.js";

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
  const overlays = await measureOverlays(stores, ids, sealedOwner, Math.min(100, appends));
  return {
    append: [samples.clear, samples.sealed],
    search: [found.clear, found.sealed],
    ...overlays,
  } as const;
}

/**
 * Overlay (compaction) summaries, sealed for the owner with a key: p50 of adding an overlay with a ~1 KB summary
 * over the session's first messages, and of the context-token estimate, which reads (and opens) the chosen
 * overlay's summary.
 */
async function measureOverlays(
  stores: { clear: RegistryCapableStore; sealed: RegistryCapableStore },
  ids: { clear: string; sealed: string },
  owner: string,
  count: number,
) {
  const add = { clear: [] as number[], sealed: [] as number[] };
  const tokens = { clear: [] as number[], sealed: [] as number[] };
  for (let i = 0; i < count; i++) {
    for (const who of ["clear", "sealed"] as const) {
      const session = stores[who].session(ids[who]);
      const summary = `summary ${i}: ${text(i).repeat(4)}`;
      const to = `${who}-${owner}-${1 + (i % (count - 1))}`;
      add[who].push(await timeUs(() => session.addCompaction(summary, `${who}-${owner}-0`, to)));
      tokens[who].push(await timeUs(() => session.getContextTokens!()));
    }
  }
  return { overlay: [add.clear, add.sealed], tokens: [tokens.clear, tokens.sealed] } as const;
}

function rowsOf(backend: string, result: Awaited<ReturnType<typeof measure>>): string[][] {
  const row = (what: string, [clear, sealed]: readonly number[][]) => {
    const [c, s] = [summarize(clear!).p50, summarize(sealed!).p50];
    return [backend, what, fmtDur(c), fmtDur(s), `${(s / c).toFixed(2)}×`];
  };
  return [
    row("append after the tip", result.append),
    row("add an overlay (~1 KB summary)", result.overlay),
    row("context tokens (opens the overlay's summary)", result.tokens),
    row("search by owner (blind index)", result.search),
  ];
}

/**
 * A key rotation of `messages` sealed messages of one owner (10 sessions) on a SQLite file: `rekey` with its
 * default batch of 200, timed whole and per batch (from one progress report to the next).
 */
async function measureRotation(dir: string, messages: number): Promise<string[]> {
  const keys = {
    current: crypto.getRandomValues(new Uint8Array(32)),
    previous: [] as Uint8Array[],
  };
  const rotating: Keyring = {
    key: (owner) => (owner === "sealed" ? keys.current : undefined),
    previousKeys: (owner) => (owner === "sealed" ? keys.previous : []),
  };
  const store = new SqliteStore(join(dir, "rotation.db"), { keyring: rotating });
  try {
    const manager = SessionManager.create(store);
    const sessions = 10;
    for (let s = 0; s < sessions; s++) {
      const { id } = await manager.create(`rotation ${s}`, { owner: "sealed" });
      const session = store.session(id);
      for (let i = s; i < messages; i += sessions) {
        await session.appendMessage({ id: `r${i}`, role: "user", parts: [{ type: "text", text: text(i) }] });
      }
    }
    keys.previous = [keys.current];
    keys.current = crypto.getRandomValues(new Uint8Array(32));
    const batches: number[] = [];
    const start = nowUs();
    let last = start;
    const report = await store.rekey("sealed", {
      onProgress: () => {
        const now = nowUs();
        batches.push(now - last);
        last = now;
      },
    });
    const total = nowUs() - start;
    return [
      "SQLite (file)",
      `${report.resealed.toLocaleString("en")} messages`,
      fmtDur(total),
      `${Math.round(report.resealed / (total / 1e6)).toLocaleString("en")}/s`,
      `${fmtDur(Math.max(...batches))} (${batches.length} batches of 200)`,
    ];
  } finally {
    await store.close();
  }
}

/** The encryption table (a Postgres row that cannot connect says why instead). */
export async function benchEncryption(scale = 1): Promise<string> {
  const appends = Math.max(50, Math.round(1000 * Math.min(1, scale)));
  const searches = Math.max(20, Math.round(200 * Math.min(1, scale)));
  const rows: string[][] = [];
  let rotation: string[] | undefined;
  const dir = mkdtempSync(join(tmpdir(), "agent-session-encryption-bench-"));
  try {
    const clear = new SqliteStore(join(dir, "clear.db"));
    const sealed = new SqliteStore(join(dir, "sealed.db"), { keyring: keyring() });
    rows.push(...rowsOf("SQLite (file)", await measure({ clear, sealed }, appends, searches)));
    await Promise.all([clear.close(), sealed.close()]);
    rotation = await measureRotation(dir, Math.max(1000, Math.round(10_000 * Math.min(1, scale))));
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
    // An owner without a key in a keyring store is stored in clear; after the session's first append its appends
    // read no key check, their statement requiring none recorded (another process may give the owner a key).
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
    "",
    "Key rotation: one owner's sealed messages (10 sessions) re-sealed under a new key by `rekey` (batches of 200, " +
      "one write transaction each; a batch is timed from one progress report to the next).",
    "",
    mdTable(
      ["backend", "rotated", "total", "messages/s", "slowest batch"],
      rotation ? [rotation] : [["SQLite (file)", "–", "–", "–", "–"]],
    ),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await benchEncryption(Number(process.env.BENCH_SCALE ?? "1")));
}
