/**
 * The stdio transport of `agent-session mcp`: newline-delimited JSON-RPC, as the SDK's StdioServerTransport, but a
 * line it cannot take is answered, never fatal. The SDK's transport closes itself when a line outgrows its 10 MiB
 * buffer (the process then ends with no answer and no message) and drops a line that is not JSON without a word;
 * here an over-long line is skipped to its end and answered `-32600` (with the request's id when its first bytes
 * name one, else `null`), a line that is not JSON `-32700`, a JSON value that is no JSON-RPC message `-32600`, and
 * the server reads on.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { StdioInput, StdioOutput } from "./stdio-streams.js";

/** The longest line read (bytes, without its newline): the SDK's own buffer limit, so clients see the same bound. */
export const MAX_STDIO_LINE_BYTES = 10 * 1024 * 1024;

// Of a line over the limit, only this much is kept: enough to find the request's id, which clients write first.
const HEAD_BYTES = 64 * 1024;

type RequestId = string | number | null;

/** Options of a {@link LineTransport}. */
export interface LineTransportOptions {
  /** The SDK's JSON-RPC message check (its `JSONRPCMessageSchema.safeParse`). */
  check(value: unknown): { success: boolean; data?: unknown };
  /** Longest line in bytes (default {@link MAX_STDIO_LINE_BYTES}). */
  maxLineBytes?: number;
  /** Told of every refused line, in one sentence (the CLI writes it to stderr). */
  report?(message: string): void;
}

/** Newline-delimited JSON-RPC over a pair of streams, answering the lines it refuses (see the file's comment). */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** The first bytes of a line over the limit while the rest of it is skipped; undefined otherwise. */
  private head: Buffer | undefined;
  private readonly max: number;

  constructor(
    private readonly input: StdioInput,
    private readonly output: StdioOutput,
    private readonly options: LineTransportOptions,
  ) {
    this.max = options.maxLineBytes ?? MAX_STDIO_LINE_BYTES;
  }

  // A stream given an encoding emits strings: taken back to bytes, since the limit counts bytes.
  private readonly onData = (data: unknown) => {
    const chunk = Buffer.isBuffer(data) ? data : Buffer.from(String(data), "utf8");
    let start = 0;
    for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, end));
      this.endLine();
      start = end + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  };

  private readonly onError = (error: unknown) =>
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("error", this.onError);
  }

  /** Adds a piece of the current line, or, past the limit, keeps only the head of it. */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.size += piece.length;
    if (this.head === undefined && this.size <= this.max) {
      this.parts.push(piece);
      return;
    }
    if (this.head === undefined) {
      // A copy: the head must not hold the whole line's memory while the rest of it streams past.
      this.head = Buffer.from(Buffer.concat([...this.parts, piece]).subarray(0, HEAD_BYTES));
      this.parts = [];
    }
  }

  private endLine(): void {
    const { head, size } = this;
    const line = head === undefined ? Buffer.concat(this.parts).toString("utf8") : undefined;
    this.parts = [];
    this.size = 0;
    this.head = undefined;
    if (head !== undefined) {
      const id = leadingId(head.toString("utf8"));
      this.refuse(
        id,
        -32600,
        `request too large: a line of ${size} bytes, over this server's limit of ${this.max} bytes; it was not read`,
      );
      return;
    }
    this.handle((line ?? "").replace(/\r$/, ""));
  }

  private handle(line: string): void {
    if (line.trim().length === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.refuse(null, -32700, "parse error: the line is not JSON");
      return;
    }
    if (!this.options.check(value).success) {
      const id = (value as { id?: unknown } | null)?.id;
      this.refuse(
        typeof id === "string" || typeof id === "number" ? id : null,
        -32600,
        "invalid request: not a JSON-RPC 2.0 message",
      );
      return;
    }
    this.onmessage?.(value as JSONRPCMessage);
  }

  private refuse(id: RequestId, code: number, message: string): void {
    this.options.report?.(message);
    this.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })).catch((error: unknown) =>
      this.onerror?.(error as Error),
    );
  }

  private write(json: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${json}\n`)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(JSON.stringify(message));
  }

  async close(): Promise<void> {
    this.input.off("data", this.onData);
    this.input.off("error", this.onError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.parts = [];
    this.head = undefined;
    this.onclose?.();
  }
}

/**
 * The `id` of the JSON object `text` starts (a string or a number), read from a prefix only: keys of nested
 * objects are skipped, so a `params.id` is never taken for it. Null when the prefix does not reach it.
 */
export function leadingId(text: string): RequestId {
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end === -1) return null;
      if (depth === 1 && expectKey) {
        let at = skipSpace(text, end + 1);
        if (text[at] !== ":") return null;
        at = skipSpace(text, at + 1);
        if (JSON.parse(text.slice(i, end + 1)) === "id") return idValue(text, at);
        expectKey = false;
        i = at - 1;
        continue;
      }
      i = end;
    } else if (c === "{" || c === "[") {
      depth++;
      expectKey = depth === 1;
    } else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 1) expectKey = true;
  }
  return null;
}

function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at++;
  return at;
}

// A whole string or number followed by the next member or the object's end; anything cut short is no id.
function idValue(text: string, at: number): RequestId {
  if (text[at] === '"') {
    const end = stringEnd(text, at);
    return end === -1 ? null : (JSON.parse(text.slice(at, end + 1)) as string);
  }
  const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?(?=\s*[,}])/.exec(text.slice(at, at + 40));
  return number ? Number(number[0]) : null;
}
