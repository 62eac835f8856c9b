import type { SessionMessagePart } from "../types.js";

type Part = SessionMessagePart & Record<string, unknown>;

/**
 * The stored answer's parts with the page's results for the tool calls it waits on, or null when the page
 * brought none. A call without a result (`input-available`, not run by the provider) takes an `output-available`
 * output or an `output-error` text; an `approval-requested` call takes an `approval-responded` answer to the same
 * approval. Only those fields are taken from the page: the rest of what it posted (text, other parts, metadata,
 * calls the answer does not have) is the server's and is ignored.
 */
export function acceptToolResults(
  parts: readonly SessionMessagePart[],
  posted: readonly unknown[],
): SessionMessagePart[] | null {
  const stored = parts as readonly Part[];
  const waiting = new Map<string, Part>();
  for (const part of stored) if (awaitsClient(part)) waiting.set(part.toolCallId as string, part);
  if (waiting.size === 0) return null;
  const answers = new Map<Part, Part>();
  for (const candidate of posted) {
    if (typeof candidate !== "object" || candidate === null) continue;
    const page = candidate as Record<string, unknown>;
    const call = typeof page.toolCallId === "string" ? waiting.get(page.toolCallId) : undefined;
    if (call === undefined || page.type !== call.type || answers.has(call)) continue;
    const answered = answer(call, page);
    if (answered) answers.set(call, answered);
  }
  return answers.size === 0 ? null : stored.map((part) => answers.get(part) ?? part);
}

function awaitsClient(part: Part): boolean {
  const isCall = part.type === "dynamic-tool" || part.type.startsWith("tool-");
  return (
    isCall &&
    typeof part.toolCallId === "string" &&
    part.providerExecuted !== true &&
    (part.state === "input-available" || part.state === "approval-requested")
  );
}

function answer(call: Part, page: Record<string, unknown>): Part | null {
  if (call.state === "input-available") {
    if (page.state === "output-available") {
      // A tool that returned nothing posts no output (JSON has no undefined).
      return { ...call, state: "output-available", ...("output" in page ? { output: page.output } : {}) };
    }
    if (page.state === "output-error" && typeof page.errorText === "string") {
      return { ...call, state: "output-error", errorText: page.errorText };
    }
    return null;
  }
  const asked = call.approval as { id?: unknown } | undefined;
  const given = page.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
  if (page.state !== "approval-responded" || typeof given !== "object" || given === null) return null;
  if (given.id !== asked?.id || typeof given.approved !== "boolean") return null;
  const reason = typeof given.reason === "string" ? { reason: given.reason } : {};
  return {
    ...call,
    state: "approval-responded",
    approval: { ...asked, approved: given.approved, ...reason },
  };
}
