import type { ToolSet } from "ai";
import type { SessionMessagePart } from "../contract/message.js";
import { SessionError } from "../errors.js";
import type { RequestBytes } from "./request-size.js";
import { closeCalls, isCall, isClientCall, lacksResult } from "./tool-calls.js";

type Part = SessionMessagePart & Record<string, unknown>;

/** Stored states of a call that has no result yet. */
const OPEN_STATES = new Set(["input-streaming", "input-available", "approval-requested"]);

/** Posted states that claim a call's result (what only the one who runs the tool may write). */
const RESULT_STATES = new Set(["output-available", "output-error", "output-denied"]);

/**
 * The stored answer's parts with the page's results for the tool calls it waits on, or null when nothing changes.
 * A client call without a result (`input-available`; with `tools`, a call of a tool without `execute`) takes an
 * `output-available` output or an `output-error` text; an `approval-requested` call takes an `approval-responded`
 * answer to the same approval. Only those fields are taken from the page: the rest of what it posted (text, other
 * parts, metadata, calls the answer does not have or has answered) is the server's and is ignored. A result posted
 * for a call without one that is not the page's (provider-executed, or a server tool's) is `CONFLICT`; with
 * `tools`, such calls are closed here by the server with an error result. `bytes` counts what the page writes.
 */
export function acceptToolResults(
  parts: readonly SessionMessagePart[],
  posted: readonly unknown[],
  tools: ToolSet | undefined,
  bytes: RequestBytes,
): SessionMessagePart[] | null {
  const stored = parts as readonly Part[];
  const unanswered = new Map<string, Part>();
  for (const part of stored) {
    if (isCall(part) && OPEN_STATES.has(part.state as string))
      unanswered.set(part.toolCallId as string, part);
  }
  if (unanswered.size === 0) return null;
  const answers = new Map<Part, Part>();
  for (const candidate of posted) {
    if (typeof candidate !== "object" || candidate === null) continue;
    const page = candidate as Record<string, unknown>;
    const call = typeof page.toolCallId === "string" ? unanswered.get(page.toolCallId) : undefined;
    if (call === undefined || page.type !== call.type || answers.has(call)) continue;
    if (!awaitsClient(call, tools)) {
      if (RESULT_STATES.has(page.state as string)) throw notThePages(call);
      continue;
    }
    const answered = answer(call, page, bytes);
    if (answered) answers.set(call, answered);
  }
  const merged = stored.map((part) => answers.get(part) ?? part);
  // With tools, a server tool's call without a result (an answer stored before lost calls were closed) is closed
  // now: the model must not read a dangling call, and the page may not fill it.
  const closed = closeCalls(merged, (part) => lacksResult(part) && !isClientCall(part, tools));
  return answers.size === 0 && closed === merged ? null : closed;
}

/** True for a call whose result (or approval) the page gives. */
function awaitsClient(part: Part, tools: ToolSet | undefined): boolean {
  if (part.providerExecuted === true) return false;
  if (part.state === "approval-requested") return true;
  return part.state === "input-available" && isClientCall(part, tools);
}

function notThePages(call: Part): SessionError {
  const runner = call.providerExecuted === true ? "the provider" : "the server";
  return new SessionError(
    "CONFLICT",
    `The page posted a result for tool call "${call.toolCallId as string}" (${call.type}), which does not wait ` +
      `on the page: only ${runner} writes its result`,
  );
}

function answer(call: Part, page: Record<string, unknown>, bytes: RequestBytes): Part | null {
  const what = `the result of tool call "${call.toolCallId as string}"`;
  if (call.state === "input-available") {
    if (page.state === "output-available") {
      bytes.add(what, page.output);
      // A tool that returned nothing posts no output (JSON has no undefined).
      return { ...call, state: "output-available", ...("output" in page ? { output: page.output } : {}) };
    }
    if (page.state === "output-error" && typeof page.errorText === "string") {
      bytes.add(what, page.errorText);
      return { ...call, state: "output-error", errorText: page.errorText };
    }
    return null;
  }
  const asked = call.approval as { id?: unknown } | undefined;
  const given = page.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
  if (page.state !== "approval-responded" || typeof given !== "object" || given === null) return null;
  if (given.id !== asked?.id || typeof given.approved !== "boolean") return null;
  const reason = typeof given.reason === "string" ? { reason: given.reason } : {};
  bytes.add(`the approval reason of tool call "${call.toolCallId as string}"`, reason.reason);
  return {
    ...call,
    state: "approval-responded",
    approval: { ...asked, approved: given.approved, ...reason },
  };
}
