/**
 * Checkpoint payloads compressed at rest (docs/LANGGRAPH.md, "Storage"): a checkpoint's bytes, its metadata, a
 * value row's (its full value or its delta's suffix) and a pending write's go in as raw DEFLATE with a preset
 * dictionary of what LangGraph and LangChain write around the text (the same bytes in every message: without the
 * dictionary a message of a few hundred bytes hardly shrinks), where that saves a tenth or more. The serializer's
 * type tag says which: `json|z1` is compressed with dictionary 1 (frozen: a new dictionary is a new tag; the first
 * byte holds the window's bits, the DEFLATE stream follows), and a tag
 * that holds a `|` of its own is stored with `|r` after it, so every stored tag reads back unambiguously, and rows
 * written before compression (tags without `|`) read as they are. Compressed before sealing (sealing.ts), so an
 * encrypted owner's rows shrink too. Off Node (no `node:zlib`) rows are written uncompressed.
 */
import { SessionError } from "../../errors.js";
import { utf8Encode } from "../../runtime/bytes.js";
import { nodeBuiltin } from "../../runtime/load.js";

type Zlib = typeof import("node:zlib");
let zlib: Zlib | null | undefined;
const z = (): Zlib | null => {
  zlib ??= nodeBuiltin<Zlib>("node:zlib") ?? null;
  return zlib;
};

// Dictionary 1: the most frequent strings last (DEFLATE's nearer matches cost fewer bits). Never edit it.
const DICTIONARY_1 = utf8Encode(
  [
    '{"v":4,"id":"","ts":"","versions_seen":{"__input__":{},"__start__":{"__start__":""}},"pending_sends":[],',
    '"updated_channels":["__start__","messages","branch:to:agent"]}{"source":"input","step":-1,"parents":{},',
    '"writes":null}{"source":"loop","step":,"parents":{}}',
    '{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"content":"",',
    '"tool_call_id":"","name":"","status":"success","artifact":null,"tool_calls":[{"name":"","args":{},"id":"",',
    '"type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":,"output_tokens":,',
    '"total_tokens":},"additional_kwargs":{},"response_metadata":{}',
    ',"id":""}}]{"messages":[{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],',
    '"kwargs":{"content":"","tool_calls":[],"invalid_tool_calls":[],"additional_kwargs":{},"response_metadata":{},',
    '"id":""}},{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"',
  ].join(""),
);

const COMPRESSED = "|z1";
const RAW = "|r";
// Below this a payload is stored as it is (a compressed one would hardly be smaller).
const MIN_BYTES = 64;

// The smallest window that holds the dictionary and the payload (zlib's own cost grows with its window: 2^15
// costs a small payload several times 2^11), stored as the first byte so a reader inflates with it.
const MIN_WINDOW = 11;
const windowFor = (length: number): number =>
  Math.min(15, Math.max(MIN_WINDOW, Math.ceil(Math.log2(length + DICTIONARY_1.length))));

// zlib's output chunk: its default (16 KiB) allocated for each delta suffix of a few hundred bytes cost a long
// chain's read a tenth of its time. A chunk near the expected output (the bytes do not depend on it) holds most
// payloads whole; a larger one is gathered from several chunks as before.
const chunkFor = (expected: number): number =>
  Math.min(65_536, Math.max(1024, 2 ** Math.ceil(Math.log2(Math.max(1, expected)))));

/** A payload as stored: its tag (see the file's comment) and bytes. */
export interface Packed {
  type: string;
  data: Uint8Array;
}

/** `data` of serializer tag `type` as stored: compressed where it saves a tenth or more. */
export function pack(type: string, data: Uint8Array): Packed {
  const zl = data.length >= MIN_BYTES ? z() : null;
  if (zl) {
    const level = data.length > 65_536 ? 1 : 6;
    const windowBits = windowFor(data.length);
    const chunkSize = chunkFor(data.length);
    const body = zl.deflateRawSync(data, { dictionary: DICTIONARY_1, level, windowBits, chunkSize });
    if (body.length + 1 <= data.length * 0.9) {
      const packed = new Uint8Array(body.length + 1);
      packed[0] = windowBits;
      packed.set(body, 1);
      return { type: type + COMPRESSED, data: packed };
    }
  }
  return { type: type.includes("|") ? type + RAW : type, data };
}

/** The serializer's tag and bytes of a stored payload. */
export function unpack(type: string, data: Uint8Array): Packed {
  if (type.endsWith(COMPRESSED)) {
    const zl = z();
    if (!zl) throw new SessionError("UNSUPPORTED", "A compressed checkpoint row needs node:zlib to be read");
    try {
      const windowBits = data[0] ?? 0;
      if (windowBits < MIN_WINDOW || windowBits > 15) throw new Error("not a window's bits");
      return {
        type: type.slice(0, -COMPRESSED.length),
        data: zl.inflateRawSync(data.subarray(1), {
          dictionary: DICTIONARY_1,
          windowBits,
          chunkSize: chunkFor(4 * data.length),
        }),
      };
    } catch {
      throw new SessionError("STORAGE", "A compressed checkpoint row is damaged");
    }
  }
  return { type: type.endsWith(RAW) ? type.slice(0, -RAW.length) : type, data };
}
