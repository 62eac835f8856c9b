import { hasAttachmentStore } from "../../contract/attachments.js";
import { type Fact, hasFactStore } from "../../contract/facts.js";
import { type GraphItem, type GraphItems, hasGraphItems } from "../../contract/graph-items.js";
import type {
  ImportCounts,
  TransferCapableStore,
  TransferItem,
  TransferRow,
  TransferSession,
} from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { contentHashes } from "../../store/media/offload.js";
import { importFactStream } from "../../store/transfer/facts.js";
import { CliError } from "../errors.js";
import type { DanglingReport, DanglingSources } from "./dangling.js";
import { decodeHeader, decodeLine, type ExportCounts, type ExportRecord, noCounts } from "./format.js";
import type { UnreadablePlan, UnreadableSkipped } from "./unreadable.js";

/** What an import did. */
export interface ImportSummary {
  /** Session records read, and how many registry rows were new. */
  sessions: { read: number; registered: number };
  messages: ImportCounts;
  compactions: ImportCounts;
  /** Blocks and entries. */
  rows: ImportCounts;
  /** Learned facts (one whose id its scope holds is skipped). */
  facts: ImportCounts;
  /** Checkpoints written (one stored with the same id is replaced, as the saver's `put` replaces it). */
  checkpoints: number;
  /** LangGraph store items (one stored under its owner, namespace and key is kept). */
  items: ImportCounts;
  /**
   * Registered sessions whose record carried no owner and no pin (a version 1 export): imported without an owner,
   * unpinned, so an owner's view does not find them and retention does not keep them.
   */
  ownerless: number;
  /** With a plan (`--skip-unreadable`): what was left out, per session that lost something. */
  unreadable?: UnreadableSkipped[];
  /** Fact sources naming messages neither stored nor in the file, left out (dangling.ts); absent when none. */
  dangling?: DanglingReport;
}

/** Decoded records with one record of look-ahead (a session's stream ends where the next record starts). */
export class Records {
  line = 0;
  private ahead: ExportRecord | undefined;
  readonly seen: ExportCounts = noCounts();

  constructor(
    private readonly lines: AsyncIterator<string>,
    private readonly onBytes: (bytes: number) => void,
  ) {}

  async peek(): Promise<ExportRecord | undefined> {
    this.ahead ??= await this.read();
    return this.ahead;
  }

  async next(): Promise<ExportRecord | undefined> {
    const record = await this.peek();
    this.ahead = undefined;
    if (record?.type === "session") this.seen.sessions++;
    else if (record?.type === "message") this.seen.messages++;
    else if (record?.type === "compaction") this.seen.compactions++;
    else if (record?.type === "row") this.seen[record.row.kind === "block" ? "blocks" : "entries"]++;
    else if (record?.type === "fact") this.seen.facts++;
    else if (record?.type === "checkpoint") this.seen.checkpoints++;
    else if (record?.type === "item") this.seen.items++;
    return record;
  }

  private async read(): Promise<ExportRecord | undefined> {
    for (;;) {
      const next = await this.lines.next();
      if (next.done) return undefined;
      this.line++;
      this.onBytes(Buffer.byteLength(next.value) + 1);
      if (this.line === 1) return decodeHeader(next.value);
      if (next.value.trim().length > 0) return decodeLine(next.value, this.line);
    }
  }
}

/**
 * The items of the session whose record was just read: its header, then its messages, overlays and checkpoints. With a plan,
 * unreadable messages and the overlays at them are left out (counted in `skipped`) and the rest re-pointed past them.
 */
async function* sessionItems(
  records: Records,
  first: TransferSession,
  plan: UnreadablePlan | undefined,
  skipped: UnreadableSkipped,
  carried: FileCarried,
): AsyncGenerator<TransferItem> {
  const id = first.id;
  yield {
    kind: "session",
    session: plan ? { ...first, leafId: plan.keptAncestor(id, first.leafId) } : first,
  };
  const own = new Set<string>();
  for (let next = await records.peek(); next; next = await records.peek()) {
    if (next.type === "message" && next.sessionId === id) {
      if (plan && next.unreadable) skipped.messages++;
      else {
        yield* carried.before(next.message.content, own);
        yield { kind: "message", message: plan ? plan.kept(id, next.message) : next.message };
      }
    } else if (next.type === "attachment" && next.sessionId === id) {
      own.add(next.attachment.hash);
      carried.hashes.add(next.attachment.hash);
      yield { kind: "attachment", attachment: next.attachment };
    } else if (next.type === "compaction" && next.sessionId === id) {
      if (plan?.drops(id, next.compaction)) skipped.overlays++;
      else yield { kind: "compaction", compaction: next.compaction };
    } else if (next.type === "checkpoint" && next.sessionId === id) {
      yield { kind: "checkpoint", checkpoint: next.checkpoint };
    } else return;
    await records.next();
  }
}

/**
 * The payloads this file carried (an export writes each payload once per file, with the first session that needs
 * it). A store's import counts a payload only for the session whose stream brought it, so a later session of the
 * file that points at one gets it re-sent from the store, where the earlier session's import put it: only hashes
 * whose bytes the file itself carried, never another payload the database holds.
 */
class FileCarried {
  readonly hashes = new Set<string>();

  constructor(private readonly store: TransferCapableStore) {}

  /** Attachment items for the file-carried payloads `content` points at that this session has not received. */
  async *before(content: string, own: Set<string>): AsyncGenerator<TransferItem> {
    if (this.hashes.size === 0 || !hasAttachmentStore(this.store)) return;
    for (const hash of contentHashes(content)) {
      if (own.has(hash) || !this.hashes.has(hash)) continue;
      const bytes = await this.store.attachments.get(hash);
      if (!bytes) continue;
      own.add(hash);
      yield { kind: "attachment", attachment: { hash, bytes } };
    }
  }
}

async function* rowItems(records: Records, first: TransferRow): AsyncGenerator<TransferRow> {
  yield first;
  for (let next = await records.peek(); next?.type === "row"; next = await records.peek()) {
    yield next.row;
    await records.next();
  }
}

// The facts from `first` on, without the dangling sources the store still lacks (and a fact left with none).
async function* factItems(
  records: Records,
  first: Fact,
  store: TransferCapableStore,
  dangling: DanglingSources | undefined,
): AsyncGenerator<Fact> {
  const stored = async (sessionId: string, messageId: string) =>
    (await store.session(sessionId).getMessage(messageId)) !== null;
  const kept = (fact: Fact) => (dangling ? dangling.kept(fact, stored) : fact);
  const head = await kept(first);
  if (head) yield head;
  for (let next = await records.peek(); next?.type === "fact"; next = await records.peek()) {
    const fact = await kept(next.fact);
    if (fact) yield fact;
    await records.next();
  }
}

/** The error for a file with LangGraph store items on a store that keeps none (the check pass raises it first). */
export function noItemStore(line: number): CliError {
  return new CliError(
    `line ${line}: the file holds LangGraph store items and this store keeps none: import it into a SQLite or Postgres store`,
    "UNSUPPORTED",
  );
}

// Items per write (one transaction each).
const ITEM_RUN = 256;

/** Imports the run of item records starting with `first`, a transaction per ITEM_RUN items. */
async function importItems(items: GraphItems, records: Records, first: GraphItem): Promise<ImportCounts> {
  const counts: ImportCounts = { inserted: 0, skipped: 0 };
  let run: GraphItem[] = [first];
  const flush = async () => {
    const inserted = await items.importItems(run);
    counts.inserted += inserted;
    counts.skipped += run.length - inserted;
    run = [];
  };
  for (let next = await records.peek(); next?.type === "item"; next = await records.peek()) {
    run.push(next.item);
    await records.next();
    if (run.length >= ITEM_RUN) await flush();
  }
  if (run.length > 0) await flush();
  return counts;
}

/** The error for a file with facts on a store that keeps none (the check pass raises it before anything is written). */
export function noFactStore(line: number): CliError {
  return new CliError(
    `line ${line}: the file holds learned facts and this store keeps none: import it into a store with facts (memory, SQLite, Postgres)`,
    "UNSUPPORTED",
  );
}

function add(total: ImportCounts, part: ImportCounts): void {
  total.inserted += part.inserted;
  total.skipped += part.skipped;
}

/**
 * Imports an export, streaming: each session is written as it is read (a batch per transaction), so a file of
 * any size needs little memory. Ids are the identity: rows already stored are skipped, so importing a file twice
 * writes nothing the second time. The import command runs checkImport (check.ts) over the whole file first, so
 * this pass only meets files that passed it; its own checks remain for a file that changed in between (what came
 * before the problem is then imported, and importing the complete file afterwards finishes the job). `plan` (from
 * that check, with `--skip-unreadable`) leaves unreadable messages out; without it the store refuses them.
 * `dangling` (from that check) leaves out the fact sources naming messages neither stored nor in the file; without
 * it the store refuses them.
 */
export async function readImport(
  store: TransferCapableStore,
  lines: AsyncIterable<string>,
  onBytes: (bytes: number) => void = () => {},
  plan?: UnreadablePlan,
  dangling?: DanglingSources,
): Promise<ImportSummary> {
  const records = new Records(lines[Symbol.asyncIterator](), onBytes);
  const carried = new FileCarried(store);
  const summary: ImportSummary = {
    sessions: { read: 0, registered: 0 },
    messages: { inserted: 0, skipped: 0 },
    compactions: { inserted: 0, skipped: 0 },
    rows: { inserted: 0, skipped: 0 },
    facts: { inserted: 0, skipped: 0 },
    checkpoints: 0,
    items: { inserted: 0, skipped: 0 },
    ownerless: 0,
  };
  if (plan) summary.unreadable = [];
  if (!(await records.next())) throw new CliError("the file is empty", "INVALID_FILE");
  let end: ExportCounts | undefined;
  try {
    for (let record = await records.next(); record; record = await records.next()) {
      if (end) throw new CliError(`line ${records.line}: data after the end record`, "INVALID_FILE");
      if (record.type === "session") {
        const skipped = { session: record.session.id, messages: 0, overlays: 0 };
        const result = await store.transfer.importSession(
          sessionItems(records, record.session, plan, skipped, carried),
        );
        if (skipped.messages + skipped.overlays > 0) summary.unreadable?.push(skipped);
        summary.sessions.read++;
        if (record.ownerless) summary.ownerless++;
        if (result.registered) summary.sessions.registered++;
        add(summary.messages, result.messages);
        add(summary.compactions, result.compactions);
        summary.checkpoints += result.checkpoints ?? 0;
      } else if (record.type === "row") {
        add(summary.rows, await store.transfer.importRows(rowItems(records, record.row)));
      } else if (record.type === "fact") {
        if (!hasFactStore(store)) throw noFactStore(records.line);
        add(
          summary.facts,
          await importFactStream(store.facts, factItems(records, record.fact, store, dangling)),
        );
      } else if (record.type === "item") {
        if (!hasGraphItems(store)) throw noItemStore(records.line);
        add(summary.items, await importItems(store.graphItems, records, record.item));
      } else if (record.type === "end") {
        end = record.counts;
      } else if (record.type === "header") {
        throw new CliError(`line ${records.line}: a second header`, "INVALID_FILE");
      } else {
        throw new CliError(
          `line ${records.line}: ${record.type} of session ${JSON.stringify(record.sessionId)} is not inside that session's records`,
          "INVALID_FILE",
        );
      }
    }
  } catch (error) {
    // Store errors name the message; the line says where in the file the import stopped.
    if (error instanceof SessionError)
      throw new CliError(`import stopped near line ${records.line}: ${error.message}`, error.code);
    throw error;
  }
  if (!end)
    throw new CliError(
      "the file ends without its end record: it was cut short (what came before was imported)",
      "INVALID_FILE",
    );
  if (dangling && dangling.report.sources > 0) summary.dangling = dangling.report;
  const seen = records.seen;
  for (const key of Object.keys(end) as (keyof ExportCounts)[]) {
    if (end[key] !== seen[key]) {
      throw new CliError(
        `the end record promises ${end[key]} ${key} but the file holds ${seen[key]}`,
        "INVALID_FILE",
      );
    }
  }
  return summary;
}
