import { hasCheckpoints } from "../../contract/checkpoints.js";
import { hasContextStorage } from "../../contract/context.js";
import { hasFactStore } from "../../contract/facts.js";
import { hasGraphItems } from "../../contract/graph-items.js";
import type { StoredCompaction } from "../../contract/message.js";
import { hasSessionRegistry } from "../../contract/registry.js";
import type { TransferCapableStore, TransferMessage } from "../../contract/transfer.js";
import { SessionError } from "../../errors.js";
import { sha256Base64url } from "../../runtime/bytes.js";
import { parseImportedFacts } from "../../store/fact-import.js";
import { sha256 } from "../../store/media/offload.js";
import { assertTransferHeader, assertTransferLinks, assertTransferRow } from "../../store/transfer/schema.js";
import { assertTransferItem } from "../../store/transfer/validate.js";
import { CliError } from "../errors.js";
import { FactOwnerCheck } from "./fact-owners.js";
import { FactSourceCheck } from "./fact-sources.js";
import type { ExportCounts } from "./format.js";
import { noFactStore, noItemStore, Records } from "./import.js";
import { UnreadablePlan, unreadableError } from "./unreadable.js";

/** Options of {@link checkImport}. */
export interface CheckOptions {
  /** Accept cached system prompts (`_system_prompt…` blocks) for sessions that already exist in the store. */
  trustPrompts?: boolean;
  /** Leave unreadable messages (`raw` records) out instead of refusing the file; see {@link UnreadablePlan}. */
  skipUnreadable?: boolean;
}

const PROMPT_KEY = "_system_prompt";

/** The session whose frozen system prompt a block key holds, or undefined for any other block. */
export function promptSession(key: string): string | undefined {
  if (key === PROMPT_KEY) return "";
  return key.startsWith(`${PROMPT_KEY}_`) ? key.slice(PROMPT_KEY.length + 1) : undefined;
}

/**
 * The session a file is reading now: its id, a fingerprint of each message read so far (by id), and its `leaf`
 * with the line naming it (checked once all its messages are read).
 */
interface Current {
  id: string;
  ids: Map<string, string>;
  leaf: string | null;
  line: number;
}

/**
 * The first pass of an import: reads the whole file and refuses it, naming the line, unless every record is one
 * the write path could have stored and the file is whole — so a refused file writes nothing. Besides each record
 * (src/store/transfer/validate.ts) it checks what spans records: a message's parent and an overlay's endpoints are earlier
 * messages of the same session in the file or already stored, records sit inside their session, the end record's
 * counts match, and a cached system prompt is only imported for a session the file brings and the store did not
 * hold (else it would plant the prompt `freezeSystemPrompt()` returns), unless `trustPrompts`, and a fact's sources are
 * messages stored or readable earlier in the file (fact-sources.ts: those the store does not hold are found by reading
 * the file again, `read` being called once more), an owner's fact names only sessions registered to it and the store
 * holds the key of a fact's encrypted owner (fact-owners.ts). An unreadable message refuses the file unless `skipUnreadable`; the
 * plan returned says which the write pass leaves out. Memory: the message ids of one session at a time, the ids of
 * left-out messages, and at most MAX_PENDING_SOURCES fact sources to find; the owner of each session the file brings.
 */
export async function checkImport(
  store: TransferCapableStore,
  read: () => AsyncIterable<string>,
  options: CheckOptions = {},
  onBytes: (bytes: number) => void = () => {},
): Promise<UnreadablePlan> {
  const records = new Records(read()[Symbol.asyncIterator](), onBytes);
  const fail: Fail = (problem) => {
    throw new CliError(`line ${records.line}: ${problem}`, "INVALID_FILE");
  };
  // Sessions the file brings: true when the store held nothing of them before this import.
  const fresh = new Map<string, boolean>();
  let current: Current | undefined;
  let end: ExportCounts | undefined;
  const plan = new UnreadablePlan();
  const sources = new FactSourceCheck(read, plan.dangling);
  const owners = hasFactStore(store) ? new FactOwnerCheck(store) : undefined;
  if (!(await records.next())) throw new CliError("the file is empty", "INVALID_FILE");
  const stored = async (sessionId: string, id: string) =>
    current?.ids.has(id) === true || (await store.session(sessionId).getMessage(id)) !== null;
  try {
    for (let record = await records.next(); record; record = await records.next()) {
      if (end) fail("data after the end record");
      if (record.type === "header") fail("a second header");
      else if (record.type === "session") {
        assertTransferHeader(record.session);
        const id = record.session.id;
        if (fresh.has(id)) fail(`session ${JSON.stringify(id)} appears twice`);
        fresh.set(id, !(await holdsSession(store, id)));
        owners?.session(id, record.session.info);
        if (current) await checkLeaf(current, stored);
        current = { id, ids: new Map(), leaf: record.session.leafId, line: records.line };
      } else if (record.type === "message" || record.type === "compaction") {
        if (record.sessionId !== current?.id) {
          fail(
            `${record.type} of session ${JSON.stringify(record.sessionId)} is not inside that session's records`,
          );
        }
        if (record.type === "compaction") await checkOverlay(record.compaction, current, stored, fail);
        else if (!record.unreadable) await checkMessage(record.message, current, stored, fail);
        else if (!options.skipUnreadable) throw unreadableError(current.id, record.message.id, records.line);
        else {
          // Its place in the tree is checked as any message's: its children are re-attached to its parent.
          await checkMessage(record.message, current, stored, fail, false);
          plan.skip(current.id, record.message);
        }
      } else if (record.type === "row") {
        assertTransferRow(record.row);
        const session = record.row.kind === "block" ? promptSession(record.row.key) : undefined;
        if (session !== undefined && !options.trustPrompts && fresh.get(session) !== true) {
          await checkPrompt(store, record.row.key, session, fail);
        }
      } else if (record.type === "fact") {
        // The store's own check of the fact, its owner's key, its sources (each a message stored or earlier in the
        // file, else noted as dangling: the write pass leaves it out, dangling.ts), and that the sources kept are its
        // owner's sessions.
        if (!owners) throw noFactStore(records.line);
        const [fact] = parseImportedFacts([record.fact]);
        await owners.writable(fact!, records.line);
        for (const { sessionId, messageId } of fact!.sources) {
          if (
            current?.id === sessionId &&
            current.ids.has(messageId) &&
            !plan.isSkipped(sessionId, messageId)
          )
            continue;
          // A session the store held nothing of has no stored message; one the file does not bring has no other.
          const isFresh = fresh.get(sessionId);
          if (isFresh !== true && (await store.session(sessionId).getMessage(messageId)) !== null) continue;
          if (isFresh === undefined) plan.dangling.note(sessionId, messageId);
          else await sources.need(sessionId, messageId, records.line, fact!.id);
        }
        const kept = fact!.sources.filter((s) => !plan.dangling.has(s.sessionId, s.messageId));
        await owners.registered({ ...fact!, sources: kept }, fail);
      } else if (record.type === "item") {
        if (!hasGraphItems(store)) throw noItemStore(records.line);
      } else if (record.type === "checkpoint") {
        if (record.sessionId !== current?.id) {
          fail(
            `a checkpoint of session ${JSON.stringify(record.sessionId)} is not inside that session's records`,
          );
        }
        if (!hasCheckpoints(store)) {
          throw new CliError(
            `line ${records.line}: the file holds checkpoints and this store keeps none: import it into a SQLite or Postgres store`,
            "UNSUPPORTED",
          );
        }
        // A delta's base is checked by the write pass (the value carried before it), before anything of it is written.
        assertTransferItem({ kind: "checkpoint", checkpoint: record.checkpoint });
      } else if (record.type === "attachment") {
        if (record.sessionId !== current?.id) {
          fail(
            `an attachment of session ${JSON.stringify(record.sessionId)} is not inside that session's records`,
          );
        }
        assertTransferItem({ kind: "attachment", attachment: record.attachment });
        if (sha256(record.attachment.bytes) !== record.attachment.hash) {
          fail(`attachment ${record.attachment.hash} does not match its bytes`);
        }
      } else end = record.counts;
    }
    if (current) await checkLeaf(current, stored);
    await sources.verify();
  } catch (error) {
    if (error instanceof SessionError) fail(error.message);
    throw error;
  }
  if (!end) {
    throw new CliError(
      "the file ends without its end record: it was cut short (nothing was imported)",
      "INVALID_FILE",
    );
  }
  for (const key of Object.keys(end) as (keyof ExportCounts)[]) {
    if (end[key] !== records.seen[key]) {
      throw new CliError(
        `the end record promises ${end[key]} ${key} but the file holds ${records.seen[key]}`,
        "INVALID_FILE",
      );
    }
  }
  return plan;
}

type Stored = (sessionId: string, id: string) => Promise<boolean>;
type Fail = (problem: string) => never;

async function checkMessage(
  message: TransferMessage,
  current: Current,
  stored: Stored,
  fail: Fail,
  readable = true,
) {
  // An unreadable message is left out, but its ids still link the tree and key the duplicate check.
  if (readable) assertTransferItem({ kind: "message", message });
  else assertTransferLinks(message);
  // Ids are the identity: a second, different record would be skipped as "already there" and silently lost.
  const print = fingerprint(message);
  const earlier = current.ids.get(message.id);
  if (earlier !== undefined && earlier !== print) {
    fail(
      `message "${message.id}" appears twice in session ${JSON.stringify(current.id)} with different content`,
    );
  }
  if (message.parentId !== null && !(await stored(current.id, message.parentId))) {
    fail(
      `the parent "${message.parentId}" of message "${message.id}" is neither stored nor earlier in the file`,
    );
  }
  current.ids.set(message.id, print);
}

// A digest, so a session's ids stay the only thing held in memory per message.
function fingerprint(message: TransferMessage): string {
  const { parentId, role, createdAt, content } = message;
  return sha256Base64url(JSON.stringify([parentId, role, createdAt, content]));
}

// The import makes `leaf` the session's latest leaf; one that names no message would be silently dropped.
async function checkLeaf(session: Current, stored: Stored): Promise<void> {
  if (session.leaf === null || (await stored(session.id, session.leaf))) return;
  throw new CliError(
    `line ${session.line}: the leaf "${session.leaf}" of session ${JSON.stringify(session.id)} is neither one ` +
      "of its messages in the file nor stored",
    "INVALID_FILE",
  );
}

async function checkOverlay(compaction: StoredCompaction, current: Current, stored: Stored, fail: Fail) {
  assertTransferItem({ kind: "compaction", compaction });
  for (const end of [compaction.fromMessageId, compaction.toMessageId]) {
    if (!(await stored(current.id, end))) {
      fail(`overlay "${compaction.id}" names message "${end}", which is neither stored nor in the file`);
    }
  }
}

// A prompt row already stored is skipped by the import (rows are never overwritten), so it is harmless.
async function checkPrompt(store: TransferCapableStore, key: string, session: string, fail: Fail) {
  if (hasContextStorage(store) && (await store.blocks.getBlock(key)) !== null) return;
  fail(
    `block "${key}" would set the frozen system prompt of session ${JSON.stringify(session)}, which this file ` +
      "does not create; pass --trust-prompts to import it anyway",
  );
}

async function holdsSession(store: TransferCapableStore, id: string): Promise<boolean> {
  if (hasSessionRegistry(store) && (await store.registry.get(id)) !== null) return true;
  return (await store.session(id).getLatestLeaf()) !== null;
}
